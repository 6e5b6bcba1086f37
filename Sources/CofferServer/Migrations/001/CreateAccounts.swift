import Fluent

/// 001: users, teams, memberships and API tokens. Released migrations are never edited.
struct CreateAccounts: AsyncMigration {
    var name: String { "001_CreateAccounts" }

    func prepare(on database: any Database) async throws {
        try await database.schema("users")
            .id()
            .field("name", .string, .required)
            .field("created_at", .datetime)
            .unique(on: "name")
            .create()
        try await database.schema("teams")
            .id()
            .field("name", .string, .required)
            .field("created_at", .datetime)
            .unique(on: "name")
            .create()
        let role = try await database.enum("role").case("viewer").case("developer").case("owner").create()
        try await database.schema("memberships")
            .id()
            .field("team_id", .uuid, .required, .references("teams", "id", onDelete: .cascade))
            .field("user_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
            .field("role", role, .required)
            .field("created_at", .datetime)
            .unique(on: "team_id", "user_id")
            .create()
        try await database.schema("api_tokens")
            .id()
            .field("user_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
            .field("name", .string, .required)
            .field("token_hash", .string, .required)
            .field("prefix", .string, .required)
            .field("created_at", .datetime)
            .field("last_used_at", .datetime)
            .field("revoked_at", .datetime)
            .unique(on: "token_hash")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("api_tokens").delete()
        try await database.schema("memberships").delete()
        try await database.enum("role").delete()
        try await database.schema("teams").delete()
        try await database.schema("users").delete()
    }
}
