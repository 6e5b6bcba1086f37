import Fluent
import SQLKit

/// 005: what the browser dashboard needs: an email and a Bcrypt password hash per user (both
/// optional: API-only users have neither) and server-side browser sessions.
///
/// Numbered 005 so that a 004 developed in parallel keeps its place. Released migrations are never
/// edited.
struct AddDashboardAccounts: AsyncMigration {
    var name: String { "005_AddDashboardAccounts" }

    func prepare(on database: any Database) async throws {
        // One column per ALTER TABLE: SQLite adds only one at a time.
        try await database.schema("users").field("email", .string).update()
        try await database.schema("users").field("password_hash", .string).update()
        // SQLite cannot add a UNIQUE column with ALTER TABLE: a unique index does the same.
        if let sql = database as? any SQLDatabase {
            try await sql.create(index: "users_email_unique").on("users").column("email").unique().run()
        }
        try await database.schema("dashboard_sessions")
            .id()
            .field("user_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
            .field("token_hash", .string, .required)
            .field("csrf_token", .string, .required)
            .field("created_at", .datetime)
            .field("expires_at", .datetime, .required)
            .unique(on: "token_hash")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("dashboard_sessions").delete()
        if let sql = database as? any SQLDatabase {
            try await sql.drop(index: "users_email_unique").run()
        }
        try await database.schema("users").deleteField("password_hash").update()
        try await database.schema("users").deleteField("email").update()
    }
}
