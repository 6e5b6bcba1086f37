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
/// collection is done.
struct BlobCollector: Sendable {
    let store: any BlobStore
    /// How long an unreferenced blob is kept after its last upload.
    let grace: TimeInterval
    /// How old an unfinished upload must be to count as left by a crash or a cut connection.
    var staleUploadAge: TimeInterval = 3600

    /// Collects once; returns the addresses removed.
    func collect(on database: any Database, now: Date = Date()) async throws -> [String] {
        let cutoff = now.addingTimeInterval(-grace)
        let candidates = try await BlobRecord.query(on: database).all().filter {
            ($0.lastUploadedAt ?? $0.createdAt ?? now) < cutoff
        }
        guard let sql = database as? any SQLDatabase else { return [] }
        var removed: [String] = []
        for blob in candidates {
            guard let address = blob.id else { continue }
            // The row goes only if nothing references the blob and no upload holds a lease on it.
            let removable = try await remove(address, on: database, now: now) {
                try await !sql.raw("""
                    DELETE FROM blobs WHERE id = \(bind: address)
                    AND NOT EXISTS (SELECT 1 FROM blob_references WHERE blob_id = \(bind: address))
                    AND NOT EXISTS (SELECT 1 FROM upload_leases WHERE blob_id = \(bind: address) AND expires_at > \(bind: now))
                    RETURNING id
                    """).all().isEmpty
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
        do {
            let withdrawn = await store.withdraw(address)
            let removable = try await decide()
            if removable {
                try await store.remove(withdrawn)
            } else {
                await store.restore(withdrawn)
            }
            try await hold.delete(on: database)
            return removable
        } catch {
            // The hold expires on its own (CollectionHold.lifetime); the next collection tries again.
            try? await hold.delete(on: database)
            throw error
        }
    }
}
