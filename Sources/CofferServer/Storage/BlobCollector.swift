import Fluent
import Foundation
import SQLKit

/// Removes blobs nothing needs: no reference (deployments), no upload in flight (an unexpired
/// lease), and not uploaded within the grace period.
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
            let hold = try await CollectionHold.take(address, on: database, now: now)
            do {
                let withdrawn = await store.withdraw(address)
                let deleted = try await sql.raw("""
                    DELETE FROM blobs WHERE id = \(bind: address)
                    AND NOT EXISTS (SELECT 1 FROM blob_references WHERE blob_id = \(bind: address))
                    AND NOT EXISTS (SELECT 1 FROM upload_leases WHERE blob_id = \(bind: address) AND expires_at > \(bind: now))
                    RETURNING id
                    """).all()
                if deleted.isEmpty {
                    await store.restore(withdrawn)
                } else {
                    try await store.remove(withdrawn)
                    removed.append(address)
                }
                try await hold.delete(on: database)
            } catch {
                // The hold expires on its own (CollectionHold.lifetime); the next collection tries again.
                try? await hold.delete(on: database)
                throw error
            }
        }
        // Leases of uploads that crashed, and what those uploads left in the store.
        try await UploadLeaseRecord.query(on: database).filter(\.$expiresAt < now).delete()
        try await store.removeStaleUploads(olderThan: staleUploadAge)
        return removed
    }
}
