import NIOCore
import Vapor

extension BlobIntake {
    /// Streams an upload's body into `upload`, checking every byte on the way: the one write loop
    /// of the API's upload and both of the dashboard's. `pieces` says what of each chunk is the
    /// file (all of it, unless the file sits inside a form). Discarding the upload when anything
    /// fails is the caller's business, since it publishes the upload afterwards.
    mutating func receive(_ body: Request.Body, into upload: any BlobUpload,
                          pieces: (ByteBuffer) throws -> [ByteBuffer] = { [$0] }) async throws {
        for try await chunk in body {
            for piece in try pieces(chunk) {
                try accept(piece)
                try await upload.write(piece)
            }
        }
    }
}
