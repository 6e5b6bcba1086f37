import Fluent
import Foundation

/// A person (or CI system) who holds API tokens and belongs to teams.
final class UserRecord: Model, @unchecked Sendable {
    static let schema = "users"

    @ID(key: .id) var id: UUID?
    @Field(key: "name") var name: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    /// The address the user signs in to the dashboard with, lowercased; nil until they set one.
    @OptionalField(key: "email") var email: String?
    /// Bcrypt hash of the dashboard password; nil: the user cannot sign in to the dashboard.
    @OptionalField(key: "password_hash") var passwordHash: String?
    /// The API token whose holder chose the password (welcome, set-up), if one did: revoking that
    /// token clears the password and ends the user's sessions (``PasswordToken``).
    @OptionalField(key: "password_token_id") var passwordTokenID: UUID?

    init() {}

    init(name: String) {
        self.name = name
    }
}
