import BlockingTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An upload on a raw connection that sends its head and the first `sent` bytes of its body, then
/// neither sends more nor closes until ``close()``: what holds a share of a bucket's upload memory
/// (`COFFER_S3_UPLOAD_MEMORY`) for as long as a test needs.
public final class HeldUpload {
    private let socket: Int32
    private let closed = NSLock()
    private var isClosed = false

    /// Sends `method path` to the server on loopback `port` with `headers` (Content-Type and
    /// Content-Length are added), then `body`'s first `sent` bytes.
    public init(port: Int, method: String, path: String, headers: [(String, String)], body: Data, sent: Int) throws {
        socket = try LoopbackSocket.connect(port: port)
        let lines = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        let head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n" + lines
            + "Content-Type: application/octet-stream\r\nContent-Length: \(body.count)\r\n\r\n"
        for chunk in [Data(head.utf8), body.prefix(sent)] {
            var offset = 0
            while offset < chunk.count {
                let written = chunk.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + offset, chunk.count - offset, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { throw POSIXError(.EPIPE) }
                offset += written
            }
        }
    }

    /// Waits (up to 10 s) until `reserved` says the server holds the upload's memory — it asks the
    /// store for a multipart upload only after reserving, so a test waits for the bucket to list
    /// one, else an upload tried at once could still find the memory free. Throws, closing the
    /// connection, if it never does.
    public func waitUntilReserved(_ reserved: () async throws -> Bool) async throws {
        for _ in 0..<100 {
            if try await reserved() { return }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        close()
        throw NotHeld()
    }

    /// Closes the connection: the server sees the upload cut short. Once: a second `close` of the
    /// descriptor number would close whatever socket of the process took that number since
    /// (another test's connection).
    public func close() {
        let first = closed.withLock {
            defer { isClosed = true }
            return !isClosed
        }
        if first { Glibc.close(socket) }
    }

    /// The held upload never became a multipart upload in the store.
    private struct NotHeld: Error, CustomStringConvertible {
        var description: String { "the held upload never reached the store (no multipart upload in its bucket after 10 s)" }
    }
}
