import CofferS3
import Foundation
import NIOCore

/// An upload into ``S3BlobStore``: a multipart upload fed in parts of ``partSize`` bytes, up to
/// ``partsInFlight`` of them sent at once (so memory stays under about 40 MiB per upload), and
/// completed only when published. Discarding it aborts the multipart upload, so no part is left
/// stored; the collector aborts any an instance could not (``S3BlobStore/removeStaleUploads(olderThan:)``).
final class S3Upload: BlobUpload {
    /// 8 MiB: within S3's 5 MiB–5 GiB part sizes, 2,048 parts for a 16 GiB blob (S3 allows 10,000).
    static let partSize = 8 << 20
    static let partsInFlight = 4
    /// The largest blob one upload takes: S3's 10,000 parts (``S3Client/partNumbers``) of ``partSize``.
    static let largestBlob = Int64(partSize) * Int64(S3Client.partNumbers.upperBound)
    /// What one upload may hold: the part being filled and the parts in flight.
    static let reservedBytes = Int64(partSize * (partsInFlight + 1))

    private let store: S3BlobStore
    private let key: String
    private let uploadID: String
    /// The account whose share of the store's ``UploadMemory`` this upload holds.
    private let uploader: UUID
    private var buffer = ByteBuffer()
    private var nextPart = 1
    private var sending: [Task<(number: Int, etag: String), any Error>] = []
    private var sent: [(number: Int, etag: String)] = []
    /// Whether the multipart upload was completed (its object exists).
    private var completed = false
    /// Whether ``reservedBytes`` are still taken from the store's ``UploadMemory``.
    private var holdsMemory = true

    /// An upload that took ``reservedBytes`` from `store.uploadMemory` for `uploader`, given back
    /// when it is published or discarded.
    init(store: S3BlobStore, key: String, uploadID: String, uploader: UUID) {
        self.store = store
        self.key = key
        self.uploadID = uploadID
        self.uploader = uploader
    }

    /// Gives the reserved memory back, once (no part is held any more).
    private func releaseMemory() {
        guard holdsMemory else { return }
        holdsMemory = false
        store.uploadMemory.release(Self.reservedBytes, for: uploader)
    }

    func write(_ piece: ByteBuffer) async throws {
        var piece = piece
        while piece.readableBytes > 0 {
            if buffer.capacity < Self.partSize { buffer.reserveCapacity(Self.partSize) }
            var slice = piece.readSlice(length: min(piece.readableBytes, Self.partSize - buffer.readableBytes))!
            buffer.writeBuffer(&slice)
            if buffer.readableBytes == Self.partSize { try await send() }
        }
    }

    /// Sends the buffered bytes as the next part; waits for the oldest part when enough are in flight.
    private func send() async throws {
        // Refused before the part travels (a configuration that bypassed the start's check).
        guard S3Client.partNumbers.contains(nextPart) else { throw BlobTooLargeForStore(limit: Self.largestBlob) }
        let part = buffer, number = nextPart, client = store.client, key = key, uploadID = uploadID
        buffer = ByteBuffer()
        nextPart += 1
        sending.append(Task { (number, try await client.uploadPart(key: key, uploadID: uploadID, partNumber: number, body: part)) })
        while sending.count >= Self.partsInFlight { sent.append(try await sending.removeFirst().value) }
    }

    func publish(as address: String) async throws {
        if buffer.readableBytes > 0 || nextPart == 1 { try await send() }
        while !sending.isEmpty { sent.append(try await sending.removeFirst().value) }
        // Every part is stored (`send` left the buffer empty): nothing of the body is held from here on.
        releaseMemory()
        try await store.client.completeMultipartUpload(key: key, uploadID: uploadID, parts: sent)
        completed = true
        let destination = store.key(of: address)
        // Completed at its own address: published, never to be deleted by this upload.
        guard key != destination else { return }
        do {
            try await store.client.copyObject(from: key, to: destination)
        } catch {
            try? await store.client.deleteObject(key: key)
            throw error
        }
        try? await store.client.deleteObject(key: key)
    }

    func discard() async {
        for task in sending { task.cancel() }
        for task in sending { _ = try? await task.value }
        sending = []
        buffer = ByteBuffer()
        releaseMemory()
        if completed {
            // Only an `incoming/` object gets here: a completed upload at its address never fails after.
            if key.hasPrefix("incoming/") { try? await store.client.deleteObject(key: key) }
        } else {
            try? await store.client.abortMultipartUpload(key: key, uploadID: uploadID)
        }
    }
}

/// An upload outgrew what one multipart upload of the bucket holds (``S3Upload/largestBlob``).
struct BlobTooLargeForStore: Error, CustomStringConvertible {
    let limit: Int64
    var description: String { "the blob is larger than the \(limit) bytes the bucket takes in one upload" }
}
