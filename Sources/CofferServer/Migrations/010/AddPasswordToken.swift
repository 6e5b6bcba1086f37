import Fluent

/// 010: `users.password_token_id`, the API token whose holder chose the account's dashboard
/// password (welcome, or the first owner's set-up with the bootstrap token). Revoking that token
/// clears the password and ends the account's sessions (``PasswordToken``): a password chosen with
/// a leaked token must not outlive the token. Absent for every password chosen before this
/// migration, and for accounts made by an invitation's join page (no token chose those).
///
/// Released migrations are never edited.
struct AddPasswordToken: AsyncMigration {
    var name: String { "010_AddPasswordToken" }

    func prepare(on database: any Database) async throws {
        try await database.schema(UserRecord.schema).field("password_token_id", .uuid).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(UserRecord.schema).deleteField("password_token_id").update()
    }
}
