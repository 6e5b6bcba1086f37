import Fluent

/// 004: what a team says is inside each sealed model it uploaded (ModelInspection's report, sent by the
/// CLI, which has the key; the server never has it). One row per team and blob. Released migrations are
/// never edited.
struct CreateModelFacts: AsyncMigration {
    var name: String { "004_CreateModelFacts" }

    func prepare(on database: any Database) async throws {
        try await database.schema("model_facts")
            .id()
            .field("team_id", .uuid, .required, .references("teams", "id", onDelete: .cascade))
            .field("blob_id", .string, .required)
            .field("facts", .string, .required)
            .field("updated_at", .datetime)
            .unique(on: "team_id", "blob_id")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("model_facts").delete()
    }
}
