import CofferFormat
import NIOCore
import Vapor

/// Where sealed models are kept: immutable blobs named by the SHA-256 of their bytes (see
/// ``BlobAddress``), never visible in part.
///
/// Two stores implement it: ``FolderBlobStore`` (a local or shared folder, `COFFER_BLOB_DIR`) and
/// ``S3BlobStore`` (an S3-compatible bucket, `COFFER_BLOB_STORE=s3://…`). Everything above them —
/// the upload checks of ``BlobIntake``, leases, quotas, ranges, collection — is the same for both.
protocol BlobStore: Sendable {
    /// The stored blob's size in bytes; nil when the store does not hold it.
    func size(of address: String) async throws -> Int64?

    /// The container header of a stored blob and its size, read as every reader does
    /// (``SealedModel/readHeader(from:)``); nil when the blob is not stored; throws
    /// ``ContainerError`` when it is not a valid container.
    func header(of address: String) async throws -> (header: ContainerHeader, size: Int64)?

    /// What ``facts(of:)`` found in this store's headers lately.
    var headerFacts: HeaderFactsCache { get }

    /// A new upload, which no reader sees until ``BlobUpload/publish(as:)``. `address`, when the
    /// uploader stated it in advance, lets a store write straight to its final place; `uploader` is
    /// the account sending it: each store bounds what one account's uploads in progress hold (a
    /// bucket's ``UploadMemory``, a folder's ``UploadSlots``) and refuses past it with 429
    /// `too_many_uploads` (``APIError/tooManyUploads()``), before a byte of the body is read.
    func beginUpload(for address: String?, by uploader: UUID) async throws -> any BlobUpload

    /// An answer with `status` whose body streams `range` of a stored blob in bounded memory, and
    /// gives `slot` back (``StreamSlot/release()``) once the body's work has ended: its last read
    /// of the store done or failed, and its last write to the client taken or dropped.
    ///
    /// Not when the answer goes: Vapor lets the answer go as soon as its write fails, and runs its
    /// body even when the client had gone before the answer was written. The slot stays in the
    /// body, so an answer never written gives it back when it is dropped (``StreamSlot``).
    func stream(_ address: String, range: Range<Int64>, status: HTTPResponseStatus, metrics: ServerMetrics,
                holding slot: StreamSlot) -> Response

    /// A URL that serves the blob without this server (a presigned GET), or nil to serve it here.
    func directURL(of address: String) -> String?

    /// Takes a blob that is about to be collected out of uploaders' sight, if the store can (the
    /// folder moves the file aside); ``restore(_:)`` or ``remove(_:)`` follows.
    func withdraw(_ address: String) async -> WithdrawnBlob

    /// Puts a withdrawn blob back: the database still needs it.
    func restore(_ blob: WithdrawnBlob) async

    /// Deletes a withdrawn blob for good.
    func remove(_ blob: WithdrawnBlob) async throws

    /// Blobs withdrawn before `cutoff` and neither restored nor removed since (their collection
    /// died or lost its database in between); a store that never moves blobs aside has none.
    func setAside(before cutoff: Date) async -> [WithdrawnBlob]

    /// Calls `body` with the addresses of the stored blobs last written before `cutoff`, a page at a
    /// time (a bucket of millions is never listed into memory at once): collection's sweep for blobs
    /// whose row is gone (a removal that failed after the row was deleted).
    func forEachStoredBlob(writtenBefore cutoff: Date, _ body: ([String]) async throws -> Void) async throws

    /// Removes what uploads left behind when they crashed or were cut (files, objects, multipart
    /// parts) once older than `age` seconds; returns how many it removed.
    @discardableResult
    func removeStaleUploads(olderThan age: TimeInterval) async throws -> Int
}

/// Bytes on their way into a ``BlobStore``. Written in order by one task.
protocol BlobUpload: AnyObject {
    /// Appends `piece`.
    func write(_ piece: ByteBuffer) async throws

    /// Makes the upload the blob `address` (its bytes were checked against it); a no-op when
    /// another upload of the same bytes won. The upload is finished afterwards.
    func publish(as address: String) async throws

    /// Throws the upload away (best effort, never throws): what a failed upload does.
    func discard() async
}

/// A blob being collected (``BlobStore/withdraw(_:)``): its address and where the store put it.
struct WithdrawnBlob: Sendable {
    let address: String
    /// Where the store moved it (the folder's aside path); nil when it stayed in place.
    let aside: String?
}

/// Content addresses: the SHA-256 of a blob's bytes in 64 lowercase hex digits.
enum BlobAddress {
    /// Whether `text` is a content address.
    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
