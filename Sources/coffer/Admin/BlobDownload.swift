import Coffer
import CofferFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads a blob, or a byte range of it, into a file: its size from `HEAD`, then pieces of at
/// most 8 MiB, one Range request each. A piece's GET may be redirected (object storage, a CDN):
/// it is followed with only Range and Accept-Encoding, at most three times, never from https to
/// http; each piece asks the server again. The HEAD and every other admin request report a
/// redirect instead (exit 76). Every body is streamed to the file as it arrives (the
/// transport reads the next bytes only once these are written), so memory stays bounded whatever
/// the blob's size and whatever the server sends. A range running past the end is shortened to
/// the blob.
///
/// A whole blob is hashed as it arrives and refused unless its SHA-256 is its address. A server
/// that ignores Range and answers 200 sends the whole blob: it is streamed from its first byte
/// (what a range asked for is cut from it as it passes) and always verified.
///
/// Refused, with nothing left at the destination (the caller discards the file): a 206 whose
/// Content-Range is not the bytes asked for, a body longer than those bytes or than the blob
/// (an endless body stops there), a 200 whose Content-Length is not the blob's size, and a body
/// that ends early.
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
        guard first < size else {
            guard let range else {
                var digest = SHA256Digest()
                try verify(&digest)
                return (0, true)
            }
            throw AdminFailure(.badData, "the range \(range.text) is outside the blob, which has \(size) bytes")
        }
        let last = min(range?.end ?? .max, size - 1)
        let sink = DownloadSink(file: file, size: size, first: first, last: last, hashing: range == nil, server: client.server)
        var offset = first
        while offset <= last {
            // last - offset cannot overflow (offset <= last), offset + pieceSize could for a blob
            // whose size a hostile HEAD put near 2^64.
            let pieceEnd = offset + min(last - offset, Self.pieceSize - 1)
            var request = client.request("GET", ["v1", "blobs", address], authorized: false)
            request.setValue("application/octet-stream", forHTTPHeaderField: "Accept")
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            request.setValue("bytes=\(offset)-\(pieceEnd)", forHTTPHeaderField: "Range")
            sink.begin(offset, through: pieceEnd)
            let response: HTTPURLResponse
            do {
                // Object storage may answer with a redirect to a presigned URL: followed, without
                // any token, and the bytes are checked as from the server itself.
                response = try await client.stream(request, followingBlobRedirect: true) { response, data in
                    try sink.accept(data, of: response)
                }
            } catch let failure as AdminFailure where failure.status == .unavailable {
                // The connection was lost inside an answer already under way: its body ended early.
                throw sink.endedEarly() ?? failure
            }
            if try sink.end(response) == .whole {
                var digest = sink.digest
                try verify(&digest)
                return (last - first + 1, true)
            }
            offset = pieceEnd + 1
        }
        guard range == nil else { return (last - first + 1, false) }
        var digest = sink.digest
        try verify(&digest)
        return (last - first + 1, true)
    }

    /// The blob's size, from `HEAD`.
    private func blobSize() async throws -> UInt64 {
        let answer: HTTPTransport.Answer
        do {
            answer = try await client.send(client.request("HEAD", ["v1", "blobs", address], authorized: false))
        } catch let failure as AdminFailure where failure.status == .noInput {
            throw AdminFailure(.noInput, "blob not found (HTTP 404)")
        }
        guard let size = answer.response.value(forHTTPHeaderField: "Content-Length").flatMap(Self.length) else {
            throw ServerFailure.unexpectedAnswer(from: client.server, "no Content-Length for the blob")
        }
        return size
    }

    /// A Content-Length value: decimal digits only (`UInt64.init` would take a sign), no overflow.
    static func length(_ text: String) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return UInt64(text)
    }

    private func verify(_ digest: inout SHA256Digest) throws {
        let actual = digest.finalizeHex()
        guard actual == address else {
            throw AdminFailure(.badData, "the downloaded bytes have SHA-256 \(actual), not \(address); nothing was written")
        }
    }
}

/// The file end of a download: checks each answer on its first bytes, then writes (and hashes)
/// its pieces at their offsets, refusing any byte beyond what was asked for or what the blob has.
///
/// Called from the transport's event loop one piece at a time; the lock only makes that explicit.
private final class DownloadSink: @unchecked Sendable {
    enum Kind { case piece, whole }

    private let lock = NSLock()
    private let file: PositionalFile
    private let size: UInt64
    /// The bytes of the blob the caller wants, inclusive.
    private let first: UInt64
    private let last: UInt64
    private let hashing: Bool
    private let server: URL

    private var hasher = SHA256Digest()
    /// The request's bytes, inclusive.
    private var asked: ClosedRange<UInt64> = 0...0
    private var kind: Kind?
    /// The blob offset of the next byte of the answer.
    private var position: UInt64 = 0

    init(file: PositionalFile, size: UInt64, first: UInt64, last: UInt64, hashing: Bool, server: URL) {
        self.file = file
        self.size = size
        self.first = first
        self.last = last
        self.hashing = hashing
        self.server = server
    }

    var digest: SHA256Digest { lock.withLock { hasher } }

    /// A new request for bytes `start...end` is about to be sent.
    func begin(_ start: UInt64, through end: UInt64) {
        lock.withLock {
            asked = start...end
            kind = nil
            position = start
        }
    }

    func accept(_ data: Data, of response: HTTPURLResponse) throws {
        try lock.withLock {
            let kind = try check(response)
            let limit = kind == .whole ? size : asked.upperBound + 1
            guard UInt64(data.count) <= limit - position else {
                throw refusal(kind == .whole ? "more bytes than the blob's \(size)" : "more than the bytes \(asked.lowerBound)-\(asked.upperBound) asked for")
            }
            try data.withUnsafeBytes { bytes in
                if hashing || kind == .whole { hasher.update(bytes) }
                // The part of these bytes that lies in first...last goes to the file.
                let start = max(position, first)
                let end = min(position + UInt64(bytes.count), last + 1)
                if start < end {
                    let slice = UnsafeRawBufferPointer(rebasing: bytes[Int(start - position)..<Int(end - position)])
                    try file.write(slice, at: start - first)
                }
            }
            position += UInt64(data.count)
        }
    }

    /// The answer ended: checks that it held all it should have, and says what it was.
    func end(_ response: HTTPURLResponse) throws -> Kind {
        try lock.withLock {
            let kind = try check(response)
            if let short = shortfall(kind) { throw short }
            return kind
        }
    }

    /// The refusal for an answer whose connection was lost after its body began; nil when no
    /// answer had begun (then it is a network failure like any other).
    func endedEarly() -> AdminFailure? {
        lock.withLock { kind.flatMap(shortfall) }
    }

    /// The refusal for a body that holds fewer bytes than it should, or nil.
    private func shortfall(_ kind: Kind) -> AdminFailure? {
        let expected = kind == .whole ? size : asked.upperBound + 1
        guard position < expected else { return nil }
        let start = kind == .whole ? 0 : asked.lowerBound
        return refusal("the answer ended after \(position - start) of \(expected - start) bytes")
    }

    /// On an answer's first bytes: a 206 must be exactly the bytes asked for, a 200 (Range
    /// ignored) the whole blob, which is then hashed and cut from its first byte.
    private func check(_ response: HTTPURLResponse) throws -> Kind {
        if let kind { return kind }
        let made: Kind
        switch response.statusCode {
        case 206:
            guard let served = response.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init),
                  served.start == asked.lowerBound, served.end == asked.upperBound, served.total == nil || served.total == size
            else { throw refusal("not the bytes \(asked.lowerBound)-\(asked.upperBound) asked for") }
            made = .piece
        case 200:
            // No Content-Length (chunked, or until the connection closes) is allowed: the body is
            // counted as it arrives. One that is given must be the blob's size.
            if let text = response.value(forHTTPHeaderField: "Content-Length") {
                guard let length = BlobDownload.length(text) else { throw refusal("a Content-Length that is not a number") }
                guard length == size else { throw refusal("a whole blob of \(length) bytes, not \(size)") }
            }
            hasher = SHA256Digest()
            position = 0
            made = .whole
        default:
            throw refusal("HTTP \(response.statusCode) to a blob request")
        }
        kind = made
        return made
    }

    private func refusal(_ what: String) -> AdminFailure {
        ServerFailure.unexpectedAnswer(from: server, what)
    }
}
