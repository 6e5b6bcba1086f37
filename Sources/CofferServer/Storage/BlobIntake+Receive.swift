import NIOCore
import Vapor
import _NIOFileSystem

extension BlobIntake {
    /// Streams an upload's body into a new file at `path` (0600), checking every byte on the way:
    /// the one write loop of the API's upload and both of the dashboard's. `pieces` says what of
    /// each chunk is the file (all of it, unless the file sits inside a form). Removing the file
    /// when anything fails is the caller's business, since it publishes the file afterwards.
    mutating func receive(_ body: Request.Body, into path: String,
                          pieces: (ByteBuffer) throws -> [ByteBuffer] = { [$0] }) async throws {
        try await FileSystem.shared.withFileHandle(
            forWritingAt: FilePath(path), options: .newFile(replaceExisting: false, permissions: [.ownerReadWrite])
        ) { handle in
            for try await chunk in body {
                for piece in try pieces(chunk) {
                    let offset = received
                    try accept(piece)
                    try await handle.write(contentsOf: piece, toAbsoluteOffset: offset)
                }
            }
        }
    }
}
