import Fluent

/// 001: apps, model keys, blobs and the audit log. Released migrations are never edited.
struct CreateAppsKeysBlobs: AsyncMigration {
    var name: String { "001_CreateAppsKeysBlobs" }

    func prepare(on database: any Database) async throws {
        try await database.schema("apps")
            .id()
            .field("team_id", .uuid, .required, .references("teams", "id", onDelete: .cascade))
            .field("name", .string, .required)
            .field("platform", .string, .required)
            .field("bundle_id", .string)
            .field("credential_hash", .string, .required)
            .field("previous_credential_hash", .string)
            .field("created_at", .datetime)
            .field("credential_rotated_at", .datetime)
            .field("revoked_at", .datetime)
            .create()
        try await database.schema("model_keys")
            .field("id", .string, .identifier(auto: false))
            .field("team_id", .uuid, .required, .references("teams", "id", onDelete: .cascade))
            .field("name", .string, .required)
            .field("wrapped_key", .data, .required)
            .field("master_key_id", .string, .required)
            .field("created_at", .datetime)
            .field("revoked_at", .datetime)
            .create()
        try await database.schema("blobs")
            .field("id", .string, .identifier(auto: false))
            .field("size", .int64, .required)
            .field("team_id", .uuid, .required, .references("teams", "id"))
            .field("created_at", .datetime)
            .create()
        try await database.schema("audit_events")
            .id()
            .field("team_id", .uuid)
            .field("action", .string, .required)
            .field("actor", .string, .required)
            .field("target", .string, .required)
            .field("outcome", .string, .required)
            .field("reason", .string)
            .field("device_id", .string)
            .field("at", .datetime)
            .create()
    }

    func revert(on database: any Database) async throws {
        for table in ["audit_events", "blobs", "model_keys", "apps"] {
            try await database.schema(table).delete()
        }
    }
}
