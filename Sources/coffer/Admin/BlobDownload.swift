import Coffer
import CofferFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads a blob, or a byte range of it, into a file: its size from `HEAD`, then pieces of at
/// most 8 MiB, one Range request each, so memory stays bounded whatever the blob's size
/// (URLSession on Linux has no back-pressure: a streamed body outpacing the disk would pile up
/// in memory). A range running past the end is shortened to the blob.
///
/// A whole blob is hashed as it arrives and refused unless its SHA-256 is its address. A server
/// that ignores Range and answers 200 sends the whole blob in one answer; the range is cut from it.
struct BlobDownload {
    static let pieceSize: UInt64 = 8 << 20

    let client: APIClient
    let address: String
    let range: ByteRange?

    /// Writes the bytes at the start of `file`; returns how many and whether the SHA-256 was verified.
    func run(into file: PositionalFile) async throws -> (written: UInt64, verified: Bool) {
        // The size first: every Range asked for then lies within the blob (some servers refuse
        // ranges that run past the end instead of shortening them).
        let size = try await blobSize()
        let first = range?.start ?? 0
        var digest = SHA256Digest()
        guard first < size else {
            guard let range else {
                try verify(&digest)
                return (0, true)
            }
            throw AdminFailure(.badData, "the range \(range.text) is outside the blob, which has \(size) bytes")
        }
        let last = min(range?.end ?? .max, size - 1)
        var offset = first
        while offset <= last {
            let pieceEnd = min(offset + Self.pieceSize - 1, last)
            var request = client.request("GET", ["v1", "blobs", address], authorized: false)
            request.setValue("application/octet-stream", forHTTPHeaderField: "Accept")
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            request.setValue("bytes=\(offset)-\(pieceEnd)", forHTTPHeaderField: "Range")
            let answer = try await client.send(request)
            let body = answer.body
            if answer.response.statusCode == 200, offset == first, UInt64(body.count) == size {
                return try whole(body, into: file)
            }
            guard answer.response.statusCode == 206,
                  let served = answer.response.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init),
                  served.start == offset, served.end == pieceEnd, served.total == size || served.total == nil,
                  UInt64(body.count) == pieceEnd - offset + 1
            else {
                throw ServerFailure.unexpectedAnswer(from: client.server, "not the bytes \(offset)-\(pieceEnd) asked for")
            }
            try body.withUnsafeBytes { bytes in
                if range == nil { digest.update(bytes) }
                try file.write(bytes, at: offset - first)
            }
            offset = pieceEnd + 1
        }
        if range == nil { try verify(&digest) }
        return (last - first + 1, range == nil)
    }

    /// The blob's size, from `HEAD`.
    private func blobSize() async throws -> UInt64 {
        let answer: HTTPTransport.Answer
        do {
            answer = try await client.send(client.request("HEAD", ["v1", "blobs", address], authorized: false))
        } catch let failure as AdminFailure where failure.status == .noInput {
            throw AdminFailure(.noInput, "blob not found (HTTP 404)")
        }
        guard let size = answer.response.value(forHTTPHeaderField: "Content-Length").flatMap({ UInt64($0) }) else {
            throw ServerFailure.unexpectedAnswer(from: client.server, "no Content-Length for the blob")
        }
        return size
    }

    /// A whole blob sent in one answer: verified, then all of it or the range is written.
    private func whole(_ body: Data, into file: PositionalFile) throws -> (written: UInt64, verified: Bool) {
        var digest = SHA256Digest()
        body.withUnsafeBytes { digest.update($0) }
        try verify(&digest)
        let start = Int(clamping: range?.start ?? 0)
        let end = range?.end.map { min(Int(clamping: $0) + 1, body.count) } ?? body.count
        try body[start..<end].withUnsafeBytes { try file.write($0, at: 0) }
        return (UInt64(end - start), true)
    }

    private func verify(_ digest: inout SHA256Digest) throws {
        let actual = digest.finalizeHex()
        guard actual == address else {
            throw AdminFailure(.badData, "the downloaded bytes have SHA-256 \(actual), not \(address); nothing was written")
        }
    }
}
