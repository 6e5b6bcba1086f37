import Fluent
import Foundation
import SQLKit

/// 007: the trust boundaries of issue 14.
///
/// - `invitations`: a team's one-use invitations (the code is stored as its SHA-256 only).
/// - `app_collections`: which collections an app's devices may read.
/// - `collection_keys`: which model keys a collection's activated deployments use; an app gets a
///   key only through one of these rows of a collection it is bound to.
/// - `audit_events.repeat_count`: identical refusals within a minute are counted into one row.
///
/// Existing data: every app is bound to every collection its team has now (the server logs how many
/// were, so operators narrow them); the keys of every deployment that was ever activated are
/// recorded; first API tokens that `member add` handed out and nobody ever used are revoked.
/// Released migrations are never edited.
struct AddTrustBoundaries: AsyncMigration {
    var name: String { "007_AddTrustBoundaries" }

    func prepare(on database: any Database) async throws {
        try await database.schema("invitations")
            .id()
            .field("team_id", .uuid, .required, .references("teams", "id", onDelete: .cascade))
            .field("role", .string, .required)
            .field("note", .string, .required)
            .field("code_hash", .string, .required)
            .field("created_by", .string, .required)
            .field("created_at", .datetime)
            .field("expires_at", .datetime, .required)
            .field("accepted_at", .datetime)
            .field("accepted_by", .string)
            .field("revoked_at", .datetime)
            .unique(on: "code_hash")
            .create()
        try await database.schema("app_collections")
            .id()
            .field("app_id", .uuid, .required, .references("apps", "id", onDelete: .cascade))
            .field("collection_id", .uuid, .required, .references("collections", "id", onDelete: .cascade))
            .field("created_at", .datetime)
            .unique(on: "app_id", "collection_id")
            .create()
        try await database.schema("collection_keys")
            .id()
            .field("collection_id", .uuid, .required, .references("collections", "id", onDelete: .cascade))
            .field("key_id", .string, .required)
            .field("created_at", .datetime)
            .unique(on: "collection_id", "key_id")
            .create()
        try await database.schema("audit_events").field("repeat_count", .int64).update()

        try await bindExistingApps(on: database)
        try await recordActivatedKeys(on: database)
        try await revokeUnusedFirstTokens(on: database)
    }

    /// Every app to every collection of its team: what apps could read before this migration.
    private func bindExistingApps(on database: any Database) async throws {
        var bound = 0
        // Only the columns this migration needs: the model gains columns in later migrations
        // (009's `attestation`), which do not exist yet when this one runs on an older database.
        for app in try await AppRecord.query(on: database).field(\.$id).field(\.$team.$id).all() {
            let collections = try await CollectionRecord.query(on: database).filter(\.$team.$id == app.$team.id).all()
            for collection in collections {
                try await AppCollectionRecord(appID: app.requireID(), collectionID: collection.requireID()).create(on: database)
            }
            if !collections.isEmpty { bound += 1 }
        }
        if bound > 0 {
            database.logger.notice("""
                migration 007 bound \(bound) existing app(s) to every collection of their team, as they could read before; \
                narrow each to what it needs: coffer app update --team TEAM APP_ID --collections A,B
                """)
        }
    }

    /// The keys of every deployment that was ever activated.
    private func recordActivatedKeys(on database: any Database) async throws {
        let deployments = try await DeploymentRecord.query(on: database).filter(\.$activatedAt != nil).all()
        for deployment in deployments {
            try await CollectionKeys.record(deployment, on: database)
        }
    }

    /// First tokens that `member add` made for someone else and that were never used: whoever
    /// holds them is not necessarily the person they were for.
    private func revokeUnusedFirstTokens(on database: any Database) async throws {
        try await TokenRecord.query(on: database)
            .filter(\.$name == "first token").filter(\.$lastUsedAt == nil).filter(\.$revokedAt == nil)
            .set(\.$revokedAt, to: Date()).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("audit_events").deleteField("repeat_count").update()
        for table in ["collection_keys", "app_collections", "invitations"] {
            try await database.schema(table).delete()
        }
    }
}
