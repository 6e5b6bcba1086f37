import AsyncHTTPClient
import NIOCore

/// An object's (or a range's) answer whose body has not been read yet.
///
/// Iterate ``body`` to receive the bytes as the network delivers them; nothing is collected. The
/// body must be read to its end or dropped; it counts the bytes and fails if the store sends fewer or
/// more than `Content-Length` said.
public struct S3ObjectStream: Sendable {
    /// 200 for the whole object, 206 for a range.
    public let status: Int
    /// The number of bytes the body holds.
    public let contentLength: Int64
    /// The range sent and the object's size, for a 206.
    public let contentRange: S3ContentRange?
    /// The object's ETag, when sent.
    public let etag: String?
    /// The body, in pieces.
    public let body: S3ObjectBody

    /// The whole object's size: the `Content-Range` total of a 206, the length of a 200.
    public var objectSize: Int64? {
        status == 200 ? contentLength : contentRange?.size
    }
}

/// The body of an ``S3ObjectStream``: the pieces of AsyncHTTPClient's response body, passed on as
/// they arrive (its back-pressure holds the connection while the reader is busy), with a byte count
/// checked against the announced length.
public struct S3ObjectBody: AsyncSequence, Sendable {
    /// One piece of the body.
    public typealias Element = ByteBuffer

    /// AsyncHTTPClient's response body.
    let source: HTTPClientResponse.Body
    /// The `Content-Length` the body must match.
    let expectedLength: Int64
    /// The operation, for errors.
    let operation: String

    /// Iterates the pieces; throws ``S3Error/malformedResponse(operation:reason:)`` when the body is
    /// longer or shorter than its `Content-Length`, ``S3Error/interrupted(operation:reason:)`` when the
    /// connection fails or stalls past the HTTP client's read timeout.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var source: HTTPClientResponse.Body.AsyncIterator
        /// Bytes still due.
        var remaining: Int64
        let operation: String

        /// The next piece, or nil after the last.
        public mutating func next() async throws -> ByteBuffer? {
            let piece: ByteBuffer?
            do {
                piece = try await source.next()
            } catch {
                if Task.isCancelled { throw CancellationError() }
                throw S3Error.interrupted(operation: operation, reason: "\(S3Client.reason(error)) with \(remaining) bytes of the body still due")
            }
            guard let piece else {
                guard remaining == 0 else {
                    throw S3Error.malformedResponse(operation: operation, reason: "the body is \(remaining) bytes shorter than its Content-Length")
                }
                return nil
            }
            guard Int64(piece.readableBytes) <= remaining else {
                throw S3Error.malformedResponse(operation: operation, reason: "the body is longer than its Content-Length")
            }
            remaining -= Int64(piece.readableBytes)
            return piece
        }
    }

    /// An iterator over the pieces.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: source.makeAsyncIterator(), remaining: expectedLength, operation: operation)
    }
}
