import Fluent

/// 002: what keeps a blob alive (references from deployments, leases of uploads in flight) and
/// when it was last uploaded, for blob collection. Released migrations are never edited.
struct CreateBlobReferences: AsyncMigration {
    var name: String { "002_CreateBlobReferences" }

    func prepare(on database: any Database) async throws {
        try await database.schema("blob_references")
            .id()
            .field("blob_id", .string, .required)
            .field("holder", .string, .required)
            .field("created_at", .datetime)
            .unique(on: "blob_id", "holder")
            .create()
        try await database.schema("upload_leases")
            .id()
            .field("blob_id", .string, .required)
            .field("expires_at", .datetime, .required)
            .create()
        try await database.schema("blobs")
            .field("last_uploaded_at", .datetime)
            .update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("blobs").deleteField("last_uploaded_at").update()
        try await database.schema("upload_leases").delete()
        try await database.schema("blob_references").delete()
    }
}
