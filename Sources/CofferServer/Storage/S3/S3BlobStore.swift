import CofferFormat
import CofferS3
import Foundation
import NIOCore
import Vapor

/// Blobs as objects of an S3-compatible bucket (`COFFER_BLOB_STORE=s3://BUCKET[/PREFIX]`):
/// `PREFIX/blobs/ADDRESS`, uploads in progress under `PREFIX/incoming/`.
///
/// An upload is a multipart upload that becomes visible only when it is completed, after the
/// checks of ``BlobIntake`` passed: straight at the blob's key when the uploader stated the address
/// (the API), else under `incoming/` and copied into place (the dashboard learns the address at
/// the end). Several instances share one bucket; nothing of the store is kept on local disk.
struct S3BlobStore: BlobStore {
    let client: S3Client
    /// Whether GETs are answered with a redirect to a presigned URL (COFFER_S3_PRESIGN).
    let presign: Bool
    /// How long a presigned URL stays valid.
    var presignLifetime: Int = 300
    /// The memory uploads in progress may hold, shared by every team (COFFER_S3_UPLOAD_MEMORY), a
    /// quarter of it at most for one account's.
    var uploadMemory = UploadMemory(limit: UploadMemory.defaultLimit)
    let headerFacts = HeaderFactsCache()

    /// How many bytes of a streamed download are passed to the client at once (``S3DownloadRelay``).
    static let coalesced = 1 << 20

    func key(of address: String) -> String { "blobs/" + address }

    /// Where this store's multipart uploads live (under the key prefix): at a blob's key when the
    /// uploader stated the address (the API), under `incoming/` otherwise (the dashboard). The
    /// sweep of stale uploads looks here only: a bucket may be shared, and another application's
    /// multipart uploads are its own business, however long they have been idle.
    static let uploadPrefixes = ["blobs/", "incoming/"]

    func size(of address: String) async throws -> Int64? {
        try await client.headObject(key: key(of: address))?.size
    }

    func header(of address: String) async throws -> (header: ContainerHeader, size: Int64)? {
        guard let size = try await size(of: address) else { return nil }
        let probe = Int(min(Int64(ContainerHeader.maximumLength), size))
        guard let first = try await client.getBytes(key: key(of: address), range: .bytes(0..<Int64(probe)), limit: probe) else { return nil }
        guard let preamble = try ContainerHeader.preamble(from: first.readableBytesView) else { throw ContainerError.malformedHeader("header ends early") }
        guard preamble.sealedLength == UInt64(size) else {
            throw ContainerError.lengthMismatch(expected: preamble.sealedLength, actual: UInt64(size))
        }
        guard Int64(preamble.headerLength) <= size else { throw ContainerError.malformedHeader("header ends early") }
        try preamble.checkHeaderLength(atMost: SealedModel.maximumHeaderLength)
        var bytes = Array(first.readableBytesView.prefix(preamble.headerLength))
        if bytes.count < preamble.headerLength {
            guard let whole = try await client.getBytes(key: key(of: address), range: .bytes(0..<Int64(preamble.headerLength)),
                                                        limit: preamble.headerLength) else { return nil }
            bytes = Array(whole.readableBytesView)
        }
        return (try ContainerHeader(parsing: bytes), size)
    }

    /// Refused with 503 `uploads_busy` when uploads in progress hold all of ``uploadMemory``, and
    /// with 429 `too_many_uploads` when `uploader`'s hold its account's share of it (both with
    /// `Retry-After`): before the store is asked anything, before a byte of the body is read.
    func beginUpload(for address: String?, by uploader: UUID) async throws -> any BlobUpload {
        switch uploadMemory.reserve(S3Upload.reservedBytes, for: uploader) {
        case nil:
            break
        case .spent:
            throw APIError(.serviceUnavailable, "uploads_busy", "too many uploads are in progress on this server; retry shortly",
                           headers: ["Retry-After": "10"])
        case .accountShareSpent:
            throw APIError.tooManyUploads()
        }
        let key = address.map(key(of:)) ?? "incoming/" + UUID().uuidString
        do {
            return S3Upload(store: self, key: key, uploadID: try await client.createMultipartUpload(key: key), uploader: uploader)
        } catch {
            uploadMemory.release(S3Upload.reservedBytes, for: uploader)
            throw error
        }
    }

    /// Streams the object's range as the store sends it, on the device connection's event loop
    /// (``S3DownloadRelay``); memory stays at what is in flight. The relay holds `slot` and gives it
    /// back once the store's download has ended and the connection has let go of every piece.
    func stream(_ address: String, range: Range<Int64>, status: HTTPResponseStatus, metrics: ServerMetrics,
                holding slot: StreamSlot) -> Response {
        let response = Response(status: status)
        response.headers.contentType = .binary
        let client = client, key = key(of: address)
        response.body = .init(stream: { writer in
            let relay = S3DownloadRelay(writer: writer, metrics: metrics, holding: slot)
            client.pipeObject(key: key, bytes: range, on: writer.eventLoop) { relay.accept($0) }
                .whenComplete { relay.finish($0) }
        }, count: Int(range.count))
        return response
    }

    func directURL(of address: String) -> String? {
        presign ? try? client.presignedGET(key: key(of: address), expires: presignLifetime, now: Date()) : nil
    }

    /// Objects cannot be moved aside atomically: the blob stays where it is while the collection
    /// decides, and ``CollectionHold`` keeps uploads of it waiting.
    func withdraw(_ address: String) async -> WithdrawnBlob { WithdrawnBlob(address: address, aside: nil) }

    func restore(_ blob: WithdrawnBlob) async {}

    /// None: objects are never moved aside.
    func setAside(before cutoff: Date) async -> [WithdrawnBlob] { [] }

    func remove(_ blob: WithdrawnBlob) async throws { try await client.deleteObject(key: key(of: blob.address)) }

    /// Lists `blobs/`, one ListObjectsV2 page (1000 keys) at a time.
    func forEachStoredBlob(writtenBefore cutoff: Date, _ body: ([String]) async throws -> Void) async throws {
        for try await page in client.listObjects(prefix: "blobs/") {
            try await body(page.compactMap { object in
                let address = String(object.key.dropFirst("blobs/".count))
                return object.key.hasPrefix("blobs/") && BlobAddress.isValid(address) && object.lastModified < cutoff ? address : nil
            })
        }
    }

    /// Aborts this store's multipart uploads (``uploadPrefixes``) started more than `age` seconds
    /// ago with no part stored since (cut connections, crashes: their parts would otherwise be
    /// stored and billed for ever) and deletes `incoming/` objects as old. An upload still sending
    /// is kept: a 16 GiB model over a slow link takes longer than an hour, and before, its upload
    /// was aborted under it (the next part failed with `NoSuchUpload`). Each upload older than
    /// `age` costs one ListParts request; one whose parts cannot be listed is aborted only a day
    /// after it began. Before, every multipart upload under the key prefix was a candidate: with
    /// no prefix, another application's in a shared bucket was aborted after an idle hour.
    @discardableResult
    func removeStaleUploads(olderThan age: TimeInterval) async throws -> Int {
        let cutoff = Date().addingTimeInterval(-age)
        let dayAgo = Date().addingTimeInterval(-86_400)
        var removed = 0
        for prefix in Self.uploadPrefixes {
            removed += try await client.abortMultipartUploads(prefix: prefix) { upload in
                guard upload.initiated < cutoff else { return false }
                do {
                    let lastPart = try await client.lastPartStored(key: upload.key, uploadID: upload.uploadID)
                    return lastPart.map { $0 < cutoff } ?? true
                } catch {
                    // Parts not listable (a policy without s3:ListMultipartUploadParts, a store busy
                    // now): such an upload counts as abandoned only a day after it began.
                    return upload.initiated < dayAgo
                }
            }
        }
        for try await page in client.listObjects(prefix: "incoming/") {
            for object in page where object.lastModified < cutoff {
                try await client.deleteObject(key: object.key)
                removed += 1
            }
        }
        return removed
    }
}
