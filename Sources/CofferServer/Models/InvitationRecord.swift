import Fluent
import Foundation

/// A team's invitation: one use, until it expires or is revoked. The code is stored as its
/// SHA-256 only; it is shown once, to the owner who made it.
final class InvitationRecord: Model, @unchecked Sendable {
    static let schema = "invitations"

    @ID(key: .id) var id: UUID?
    @Parent(key: "team_id") var team: TeamRecord
    @Field(key: "role") var role: String
    /// Who it is meant for, in the inviting owner's words (a label; it binds nothing).
    @Field(key: "note") var note: String
    @Field(key: "code_hash") var codeHash: String
    @Field(key: "created_by") var createdBy: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "accepted_at") var acceptedAt: Date?
    /// The account name that redeemed it.
    @OptionalField(key: "accepted_by") var acceptedBy: String?
    @OptionalField(key: "revoked_at") var revokedAt: Date?
    /// The account that made it (``InvitationIssuer``; migration 014); nil for invitations from before.
    @OptionalField(key: "creator_id") var creatorID: UUID?
    /// The API token that made it, or for one made on the dashboard the token that chose the
    /// password it asked for (``InvitationIssuer``; migration 014); nil when none did, and before 014.
    @OptionalField(key: "token_id") var tokenID: UUID?

    init() {}

    init(teamID: UUID, role: Role, note: String, codeHash: String, createdBy: String, expiresAt: Date,
         creatorID: UUID? = nil, tokenID: UUID? = nil) {
        self.$team.id = teamID
        self.role = role.rawValue
        self.note = note
        self.codeHash = codeHash
        self.createdBy = createdBy
        self.expiresAt = expiresAt
        self.creatorID = creatorID
        self.tokenID = tokenID
    }

    /// pending, accepted, revoked or expired, as of `now`.
    func state(now: Date = Date()) -> String {
        if acceptedAt != nil { return "accepted" }
        if revokedAt != nil { return "revoked" }
        return expiresAt <= now ? "expired" : "pending"
    }
}
