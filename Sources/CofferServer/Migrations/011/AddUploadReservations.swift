import Fluent

/// 011: `upload_leases.team_id` and `upload_leases.size`, what an upload in flight reserves of its
/// team's storage quota (``TeamQuota``). Absent for leases that reserve nothing (blobs already
/// counted, collection holds, and every lease from before this migration).
///
/// Released migrations are never edited.
struct AddUploadReservations: AsyncMigration {
    var name: String { "011_AddUploadReservations" }

    func prepare(on database: any Database) async throws {
        // One column a statement: SQLite's ALTER TABLE adds one at a time.
        try await database.schema(UploadLeaseRecord.schema).field("team_id", .uuid).update()
        try await database.schema(UploadLeaseRecord.schema).field("size", .int64).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(UploadLeaseRecord.schema).deleteField("size").update()
        try await database.schema(UploadLeaseRecord.schema).deleteField("team_id").update()
    }
}
