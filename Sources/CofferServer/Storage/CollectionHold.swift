import Fluent
import Foundation
import Vapor

/// Blob collection's claim on one blob while it decides and deletes: a row in `upload_leases`
/// under `collect:ADDRESS` (never a content address, so collection's own check for leases does
/// not see it).
///
/// An upload takes its lease first, then waits until no hold is left before it looks for the
/// blob. Collection takes the hold first, then deletes the blob's row only if no upload lease
/// exists. Each side writes before it reads, so at least one sees the other: either the
/// collection finds the lease and keeps the blob, or the upload waits until the object is gone and
/// sends its bytes. An object store, which cannot move a blob aside atomically as the folder does,
/// needs this; the folder gets it too, at the cost of one query per upload.
enum CollectionHold {
    /// How long a hold lasts if its collector dies holding it.
    static let lifetime: TimeInterval = 600

    static func key(_ address: String) -> String { "collect:" + address }

    /// Takes the hold on `address`.
    static func take(_ address: String, on db: any Database, now: Date = Date()) async throws -> UploadLeaseRecord {
        let hold = UploadLeaseRecord(blobID: key(address), expiresAt: now.addingTimeInterval(lifetime))
        try await hold.create(on: db)
        return hold
    }

    /// Waits until no collection holds `address` (they last a moment: one delete); after `patience`
    /// seconds answers 503, which the uploader may try again.
    static func waitUntilReleased(_ address: String, on db: any Database, patience: TimeInterval = 30) async throws {
        let deadline = Date().addingTimeInterval(patience)
        while try await UploadLeaseRecord.query(on: db).filter(\.$blobID == key(address)).filter(\.$expiresAt > Date()).first() != nil {
            guard Date() < deadline else {
                throw APIError(.serviceUnavailable, "blob_being_collected", "this blob is being collected; send it again in a minute")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
