import Fluent
import Foundation

/// A personal API token, stored as the SHA-256 of its value; the value is shown once.
final class TokenRecord: Model, @unchecked Sendable {
    static let schema = "api_tokens"

    @ID(key: .id) var id: UUID?
    @Parent(key: "user_id") var user: UserRecord
    @Field(key: "name") var name: String
    @Field(key: "token_hash") var tokenHash: String
    @Field(key: "prefix") var prefix: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    @OptionalField(key: "last_used_at") var lastUsedAt: Date?
    @OptionalField(key: "revoked_at") var revokedAt: Date?
    /// The API token that made this one through `POST /v1/tokens` (migration 013); nil otherwise.
    @OptionalField(key: "parent_token_id") var parentTokenID: UUID?

    init() {}

    init(userID: UUID, name: String, tokenHash: String, prefix: String) {
        self.$user.id = userID
        self.name = name
        self.tokenHash = tokenHash
        self.prefix = prefix
    }
}
