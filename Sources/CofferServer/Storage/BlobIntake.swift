import CofferFormat
import Crypto
import Vapor

/// The checks every upload of a sealed model passes while it streams in, whichever route it comes
/// by (the API's `PUT …/blobs/:sha256`, the dashboard's upload): a bounded length, a valid Coffer
/// container header whose stated length is the upload's, and the SHA-256 that names it.
///
/// Fed chunk by chunk (``receive(_:into:keeping:pieces:)`` streams a request body to a file through it);
/// keeps no more than one container header in memory.
struct BlobIntake {
    private var hasher = SHA256()
    private var check: UploadHeaderCheck
    /// Bytes accepted so far.
    private(set) var received: Int64 = 0
    /// The stated size (``exact``) or the most an upload may have.
    let limit: Int64
    /// Whether the upload stated its size (Content-Length of a raw body) and must have exactly ``limit`` bytes.
    let exact: Bool

    /// An upload that stated its size.
    init(size: Int64) {
        limit = size
        exact = true
        check = UploadHeaderCheck(declaredSize: size)
    }

    /// An upload whose size is known only at its end (a file inside a form), at most `maximum` bytes.
    init(atMost maximum: Int64) {
        limit = maximum
        exact = false
        check = UploadHeaderCheck(declaredSize: nil)
    }

    /// Takes the next bytes; throws as soon as the upload is known to be too long or not a container.
    mutating func accept(_ chunk: ByteBuffer) throws {
        // Saturating: a limit near Int64.max (COFFER_MAX_BLOB_SIZE, a stated Content-Length) must
        // give "too long", never an overflow trap.
        let (sum, overflow) = received.addingReportingOverflow(Int64(chunk.readableBytes))
        received = overflow ? .max : sum
        guard !overflow, received <= limit else {
            throw exact ? APIError.invalid("the body is longer than its Content-Length")
                : APIError(.payloadTooLarge, "too_large", "blobs are limited to \(limit) bytes")
        }
        chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        do {
            try check.feed(chunk.readableBytesView)
        } catch let error as ContainerError {
            throw APIError(.unprocessableEntity, "not_a_container", "the upload is not a valid Coffer container: \(error)")
        }
        if !exact, let header = check.header {
            guard header.sealedLength <= UInt64(limit) else {
                throw APIError(.payloadTooLarge, "too_large", "blobs are limited to \(limit) bytes")
            }
            guard UInt64(received) <= header.sealedLength else {
                throw APIError(.unprocessableEntity, "not_a_container", "the upload is longer than its container header says")
            }
        }
    }

    /// The upload's address (SHA-256, lowercase hex) once all of it is in; throws if it is cut short
    /// or never had a whole container header.
    func finish() throws -> String {
        if exact, received != limit { throw APIError.invalid("the body ended after \(received) of \(limit) bytes") }
        guard let header = check.header else {
            throw APIError(.unprocessableEntity, "not_a_container", "the upload is too short to be a Coffer container")
        }
        guard header.sealedLength == UInt64(received) else {
            throw APIError(.unprocessableEntity, "not_a_container",
                           "the upload is not a valid Coffer container: it has \(received) bytes, its header says \(header.sealedLength)")
        }
        return hasher.finalize().hexString
    }
}
