import NIOCore
import Vapor

extension BlobIntake {
    /// Streams an upload's body (a request's, or any sequence of chunks) into `upload`, checking
    /// every byte on the way: the one write loop of the API's upload and both of the dashboard's.
    /// `pieces` says what of each chunk is the file (all of it, unless the file sits inside a
    /// form). An upload that holds its lease while its body arrives passes it as `lease`, which
    /// keeps it from expiring for as long as chunks keep coming (and fails the upload when it
    /// cannot). Discarding the upload when anything fails is the caller's business, since it
    /// publishes the upload afterwards.
    mutating func receive<Body: AsyncSequence>(_ body: Body, into upload: any BlobUpload, keeping lease: LeaseKeeper? = nil,
                                               pieces: (ByteBuffer) throws -> [ByteBuffer] = { [$0] }) async throws
    where Body.Element == ByteBuffer {
        var lease = lease
        for try await chunk in body {
            try await lease?.bodyArrived()
            for piece in try pieces(chunk) {
                try accept(piece)
                try await upload.write(piece)
            }
        }
    }
}
