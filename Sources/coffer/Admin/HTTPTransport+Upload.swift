import CofferAsyncHTTPClient
import CofferFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPTransport {
    /// Sends the file at `path` as the request body, read from disk a mebibyte at a time as it
    /// goes out (the next piece is read once the last one was written to the connection);
    /// `progress` hears how many more bytes went out each time some did. The answer is collected
    /// up to `limit`, like every other one.
    func upload(_ request: URLRequest, fromFile path: String, limit: Int = HTTPTransport.answerLimit,
                progress: (@Sendable (UInt64) -> Void)? = nil) async throws -> Answer {
        let source = try FilePieces(path: path)
        let body = CollectedBody(limit: limit)
        let response = try await transport.stream(request, bodyLength: source.size, nextPiece: source.next, sent: progress) { _, piece in
            try body.append(piece)
        }
        return Answer(response: response, body: body.data)
    }
}

/// A file read in order, one piece at a time, for a request body.
private final class FilePieces: @unchecked Sendable {
    static let pieceSize: UInt64 = 1 << 20

    let size: UInt64
    private let file: PositionalFile
    private let lock = NSLock()
    private var offset: UInt64 = 0

    init(path: String) throws {
        file = try PositionalFile(readingAt: path)
        size = try file.size()
    }

    /// The next piece: at most a mebibyte, empty at the end of the file.
    func next() throws -> [UInt8] {
        try lock.withLock {
            let count = Int(min(Self.pieceSize, size - min(offset, size)))
            let piece = try file.read(count: count, at: offset)
            offset += UInt64(piece.count)
            return piece
        }
    }
}
