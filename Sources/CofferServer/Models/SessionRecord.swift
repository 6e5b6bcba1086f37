import Fluent
import Foundation

/// A signed-in browser: the SHA-256 of the random token in its cookie (never the token itself),
/// the CSRF token its forms carry, and when it ends.
final class SessionRecord: Model, @unchecked Sendable {
    static let schema = "dashboard_sessions"

    @ID(key: .id) var id: UUID?
    @Parent(key: "user_id") var user: UserRecord
    @Field(key: "token_hash") var tokenHash: String
    @Field(key: "csrf_token") var csrfToken: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    @Field(key: "expires_at") var expiresAt: Date

    init() {}

    init(userID: UUID, tokenHash: String, csrfToken: String, expiresAt: Date) {
        self.$user.id = userID
        self.tokenHash = tokenHash
        self.csrfToken = csrfToken
        self.expiresAt = expiresAt
    }
}
