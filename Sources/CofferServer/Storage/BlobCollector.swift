import Fluent
import Foundation
import SQLKit

/// Removes blobs nothing needs: no reference (deployments), no upload in flight (an unexpired
/// lease), and not uploaded within the grace period.
///
/// Blobs whose row is gone but whose bytes stayed (a removal that failed after the row was deleted)
/// are found by listing the store and removed the same way, after the same grace period.
///
/// Safe with uploads and other instances running. For each candidate the collector takes a
/// ``CollectionHold``, withdraws the blob (the folder moves its file aside), then deletes its row
/// only if the conditions still hold in that one statement; if an upload took a lease in between,
/// the row stays and the blob is put back. An upload takes its lease before it waits for holds and
/// looks for the blob, so it either keeps the blob with its lease or uploads it again once the
/// collection is done. Blobs still referenced or leased are not withdrawn at all (a withdrawn blob
/// answers 404 for a moment), and a withdrawal a collection could not finish (it died, or its
/// database failed in between) is settled by the next one, from what the database says.
struct BlobCollector: Sendable {
    let store: any BlobStore
    /// How long an unreferenced blob is kept after its last upload.
    let grace: TimeInterval
    /// How old an unfinished upload must be to count as left by a crash or a cut connection.
    var staleUploadAge: TimeInterval = 3600

    /// Collects once; returns the addresses removed.
    func collect(on database: any Database, now: Date = Date()) async throws -> [String] {
        guard let sql = database as? any SQLDatabase else { return [] }
        try await settle(await store.setAside(before: now.addingTimeInterval(-CollectionHold.lifetime)), on: database)
        let cutoff = now.addingTimeInterval(-grace)
        let candidates = try await BlobRecord.query(on: database).all().filter {
            ($0.lastUploadedAt ?? $0.createdAt ?? now) < cutoff
        }
        var removed: [String] = []
        for blob in candidates {
            guard let address = blob.id, try await !isNeeded(address, on: sql, now: now) else { continue }
            // The row goes only if nothing references the blob, no upload holds a lease on it, and
            // it is still past its grace period. A deployment saved meanwhile on PostgreSQL marks
            // the row (ModelVersions) before its reference commits: the row is locked first, which
            // waits for that deployment, and the DELETE, a statement of its own, then sees its
            // reference. (A DELETE that waited on the row itself would re-check only the row: its
            // subqueries keep the snapshot taken before the reference existed, and with a grace
            // period shorter than the deployment's transaction the row would go.)
            let removable = try await remove(address, on: database, now: now) {
                try await database.transaction { tx in
                    let sql = try tx.sql()
                    if sql.dialect.name == "postgresql" {
                        try await sql.raw("SELECT id FROM blobs WHERE id = \(bind: address) FOR UPDATE").run()
                    }
                    return try await !sql.raw("""
                        DELETE FROM blobs WHERE id = \(bind: address)
                        AND COALESCE(last_uploaded_at, created_at) < \(bind: cutoff)
                        AND NOT EXISTS (SELECT 1 FROM blob_references WHERE blob_id = \(bind: address))
                        AND NOT EXISTS (SELECT 1 FROM upload_leases WHERE blob_id = \(bind: address) AND expires_at > \(bind: now))
                        RETURNING id
                        """).all().isEmpty
                }
            }
            if removable { removed.append(address) }
        }
        // Blobs the database no longer knows (a removal that failed after its row was deleted), once
        // as old as the grace period; an upload in flight (a lease) or a row that came back keeps one.
        try await store.forEachStoredBlob(writtenBefore: cutoff) { page in
            for batch in stride(from: 0, to: page.count, by: 500).map({ Array(page[$0..<min($0 + 500, page.count)]) }) {
                let known = Set(try await BlobRecord.query(on: database).filter(\.$id ~~ batch).all().compactMap(\.id))
                for address in batch where !known.contains(address) {
                    if try await removeUnrecorded(address, on: sql, database: database, now: now) { removed.append(address) }
                }
            }
        }
        // Leases of uploads that crashed, and what those uploads left in the store.
        try await UploadLeaseRecord.query(on: database).filter(\.$expiresAt < now).delete()
        try await store.removeStaleUploads(olderThan: staleUploadAge)
        return removed
    }

    /// Whether a deployment references `address` or an upload holds a lease on it now: such a
    /// blob is not even withdrawn (the statement that deletes a row checks again under the hold).
    private func isNeeded(_ address: String, on sql: any SQLDatabase, now: Date) async throws -> Bool {
        try await !sql.raw("""
            SELECT blob_id FROM blob_references WHERE blob_id = \(bind: address)
            UNION ALL SELECT blob_id FROM upload_leases WHERE blob_id = \(bind: address) AND expires_at > \(bind: now)
            """).all().isEmpty
    }

    /// Finishes withdrawals an earlier collection left: a blob the database still records is put
    /// back, any other removed.
    private func settle(_ withdrawn: [WithdrawnBlob], on database: any Database) async throws {
        for blob in withdrawn {
            if try await BlobRecord.find(blob.address, on: database) != nil {
                await store.restore(blob)
            } else {
                try? await store.remove(blob)
            }
        }
    }

    /// Removes a stored blob that has no row, unless a row or an unexpired upload lease appeared
    /// for it by the time the hold was taken.
    private func removeUnrecorded(_ address: String, on sql: any SQLDatabase, database: any Database, now: Date) async throws -> Bool {
        try await remove(address, on: database, now: now) {
            try await sql.raw("""
                SELECT id FROM blobs WHERE id = \(bind: address)
                UNION ALL SELECT blob_id FROM upload_leases WHERE blob_id = \(bind: address) AND expires_at > \(bind: now)
                """).all().isEmpty
        }
    }

    /// Under a ``CollectionHold`` on `address`: withdraws the blob, asks `decide` (true: remove it),
    /// then removes it or puts it back; true when it was removed.
    private func remove(_ address: String, on database: any Database, now: Date, decide: () async throws -> Bool) async throws -> Bool {
        let hold = try await CollectionHold.take(address, on: database, now: now)
        let withdrawn = await store.withdraw(address)
        var decided = false
        do {
            let removable = try await decide()
            decided = true
            if removable {
                try await store.remove(withdrawn)
            } else {
                await store.restore(withdrawn)
            }
            try await hold.delete(on: database)
            return removable
        } catch {
            // Undecided (the database failed): the blob goes back, its row is still there. A
            // removal that failed after its row went is finished by a later collection.
            if !decided { await store.restore(withdrawn) }
            // The hold expires on its own (CollectionHold.lifetime); the next collection tries again.
            try? await hold.delete(on: database)
            throw error
        }
    }
}
