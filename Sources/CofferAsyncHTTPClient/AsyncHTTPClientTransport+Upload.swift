import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AsyncHTTPClientTransport {
    /// Sends `request` with a body of exactly `length` bytes that `nextPiece` hands over in order,
    /// and streams the answer to `consume` as ``stream(_:consume:)`` does.
    ///
    /// `nextPiece` is called again only once the previous piece was written to the connection, so
    /// a large file goes out in bounded memory; `sent` hears each piece's size once it was. A
    /// `nextPiece` that throws stops the request with its error; one that runs dry before `length`
    /// bytes, or gives more, stops it with ``BodyLengthChanged``.
    ///
    /// Package access: for the `coffer` CLI's uploads; the SDK itself never sends a large body.
    package func stream(_ request: URLRequest, bodyLength length: UInt64,
                        nextPiece: @escaping @Sendable () throws -> [UInt8],
                        sent: (@Sendable (UInt64) -> Void)? = nil,
                        consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) async throws -> HTTPURLResponse {
        guard let contentLength = Int64(exactly: length) else { throw URLError(.dataLengthExceedsMaximum) }
        let body = HTTPClient.Body.stream(contentLength: contentLength) { writer in
            MultiThreadedEventLoopGroup.singleton.any().makeFutureWithTask {
                var left = length
                while left > 0 {
                    let piece = try nextPiece()
                    guard !piece.isEmpty, UInt64(piece.count) <= left else { throw BodyLengthChanged() }
                    try await writer.write(.byteBuffer(ByteBuffer(bytes: piece))).get()
                    left -= UInt64(piece.count)
                    sent?(UInt64(piece.count))
                }
            }
        }
        return try await execute(request, body: body, consume: consume)
    }
}

/// A request body's source gave fewer or more bytes than the length announced for it (a file
/// that changed while it was sent); the request was stopped.
package struct BodyLengthChanged: Error {
    package init() {}
}
