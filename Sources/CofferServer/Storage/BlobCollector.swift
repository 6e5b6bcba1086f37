import Fluent
import Foundation
import SQLKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Removes blobs nothing needs: no reference (deployments), no upload in flight (an unexpired
/// lease), and not uploaded within the grace period.
///
/// Safe with uploads and other instances running: a candidate's file is first moved aside, then
/// its row is deleted only if the conditions still hold in that one statement; if an upload took a
/// lease in between, the row stays and the file is moved back (same bytes, same address). An
/// upload always takes its lease before it looks for the file, so it either sees the file gone and
/// uploads it again, or its lease stops the deletion.
struct BlobCollector: Sendable {
    let store: BlobStore
    /// How long an unreferenced blob is kept after its last upload.
    let grace: TimeInterval

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
            let aside = store.asidePath()
            let moved = rename(store.path(of: address), aside) == 0
            let deleted = try await sql.raw("""
                DELETE FROM blobs WHERE id = \(bind: address)
                AND NOT EXISTS (SELECT 1 FROM blob_references WHERE blob_id = \(bind: address))
                AND NOT EXISTS (SELECT 1 FROM upload_leases WHERE blob_id = \(bind: address) AND expires_at > \(bind: now))
                RETURNING id
                """).all()
            if deleted.isEmpty {
                if moved { _ = rename(aside, store.path(of: address)) }
            } else {
                if moved { unlink(aside) }
                removed.append(address)
            }
        }
        // Leases of uploads that crashed.
        try await UploadLeaseRecord.query(on: database).filter(\.$expiresAt < now).delete()
        return removed
    }
}
