import Fluent
import Foundation

/// An app of a team; its devices authenticate with the app ID and credential (stored hashed).
final class AppRecord: Model, @unchecked Sendable {
    static let schema = "apps"

    @ID(key: .id) var id: UUID?
    @Parent(key: "team_id") var team: TeamRecord
    @Field(key: "name") var name: String
    @Field(key: "platform") var platform: String
    @OptionalField(key: "bundle_id") var bundleID: String?
    @Field(key: "credential_hash") var credentialHash: String
    /// The credential replaced by the last rotation: presenting it is refused as revoked, not unknown.
    @OptionalField(key: "previous_credential_hash") var previousCredentialHash: String?
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    @OptionalField(key: "credential_rotated_at") var credentialRotatedAt: Date?
    @OptionalField(key: "revoked_at") var revokedAt: Date?
    /// The attestation policy as JSON (``AttestationSettings``); nil is `none`.
    @OptionalField(key: "attestation") var attestation: String?

    init() {}

    init(teamID: UUID, name: String, platform: String, bundleID: String?, credentialHash: String) {
        self.$team.id = teamID
        self.name = name
        self.platform = platform
        self.bundleID = bundleID
        self.credentialHash = credentialHash
    }
}
