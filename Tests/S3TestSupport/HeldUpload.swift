import BlockingTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An upload on a raw connection that sends its head and the first `sent` bytes of its body, then
/// neither sends more nor closes until ``close()``: what holds a share of a bucket's upload memory
/// (`COFFER_S3_UPLOAD_MEMORY`) for as long as a test needs.
///
/// It never reads either: a `GET` with an empty body and a small `receiveBuffer` is a download
/// whose client takes nothing, which holds one of the blob bodies the server streams at once
/// (`COFFER_BLOB_STREAMS`) until it closes (``waitForAnswerStatus()`` says when it is answered).
public final class HeldUpload {
    private let socket: Int32
    private let closed = NSLock()
    private var isClosed = false

    /// Sends `method path` to the server on loopback `port` with `headers` (Content-Type and
    /// Content-Length are added), then `body`'s first `sent` bytes; the connection's receive buffer
    /// is `receiveBuffer` bytes if given.
    public init(port: Int, method: String, path: String, headers: [(String, String)], body: Data, sent: Int,
                receiveBuffer: Int32? = nil) throws {
        socket = try LoopbackSocket.connect(port: port, receiveBuffer: receiveBuffer)
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

    /// Waits (up to 10 s) for the head of the server's answer and returns its status, taking no byte
    /// off the connection: what came stays in its receive buffer, so a body the server streams finds
    /// it full. Throws, closing the connection, if no head comes.
    public func waitForAnswerStatus() async throws -> Int {
        let capacity = 4096
        var bytes = [UInt8](repeating: 0, count: capacity)
        for _ in 0..<100 {
            let peeked = Glibc.recv(socket, &bytes, capacity, Int32(MSG_PEEK | MSG_DONTWAIT))
            let text = String(decoding: bytes.prefix(max(peeked, 0)), as: UTF8.self)
            if text.hasPrefix("HTTP/1.1 "), text.contains("\r\n\r\n"), let status = Int(text.dropFirst(9).prefix(3)) { return status }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        close()
        throw NotAnswered()
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

    /// The server sent no answer's head within 10 s.
    private struct NotAnswered: Error, CustomStringConvertible {
        var description: String { "the held request got no answer's head in 10 s" }
    }

    /// The held upload never became a multipart upload in the store.
    private struct NotHeld: Error, CustomStringConvertible {
        var description: String { "the held upload never reached the store (no multipart upload in its bucket after 10 s)" }
    }
}
