import Fluent

/// 003: model collections, model versions, deployments, their activation history, and the
/// manifest-signing key. Released migrations are never edited.
struct CreateDeployments: AsyncMigration {
    var name: String { "003_CreateDeployments" }

    func prepare(on database: any Database) async throws {
        try await database.schema("collections")
            .id()
            .field("team_id", .uuid, .required, .references("teams", "id", onDelete: .cascade))
            .field("identifier", .string, .required)
            .field("description", .string, .required)
            .field("model_names", .array(of: .string), .required)
            .field("sequence", .int64, .required)
            .field("active_deployment_id", .uuid)
            .field("created_at", .datetime)
            .unique(on: "team_id", "identifier")
            .create()
        try await database.schema("model_versions")
            .id()
            .field("collection_id", .uuid, .required, .references("collections", "id", onDelete: .cascade))
            .field("model_name", .string, .required)
            .field("blob_id", .string, .required)
            .field("size", .int64, .required)
            .field("key_id", .string, .required)
            .field("created_by", .string, .required)
            .field("created_at", .datetime)
            .unique(on: "collection_id", "model_name", "blob_id")
            .create()
        try await database.schema("deployments")
            .id()
            .field("collection_id", .uuid, .required, .references("collections", "id", onDelete: .cascade))
            .field("name", .string, .required)
            .field("status", .string, .required)
            .field("rollout_seed", .string, .required)
            .field("spec", .json, .required)
            .field("created_by", .string, .required)
            .field("created_at", .datetime)
            .field("activated_at", .datetime)
            .create()
        try await database.schema("activations")
            .id()
            .field("collection_id", .uuid, .required, .references("collections", "id", onDelete: .cascade))
            .field("deployment_id", .uuid, .required, .references("deployments", "id", onDelete: .cascade))
            .field("sequence", .int64, .required)
            .field("kind", .string, .required)
            .field("actor", .string, .required)
            .field("at", .datetime)
            .unique(on: "collection_id", "sequence")
            .create()
        try await database.schema("signing_keys")
            .field("id", .string, .identifier(auto: false))
            .field("key_id", .string, .required)
            .field("public_key", .data, .required)
            .field("wrapped_key", .data, .required)
            .field("master_key_id", .string, .required)
            .field("created_at", .datetime)
            .create()
    }

    func revert(on database: any Database) async throws {
        for table in ["signing_keys", "activations", "deployments", "model_versions", "collections"] {
            try await database.schema(table).delete()
        }
    }
}
