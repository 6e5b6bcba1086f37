import CofferFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A blob GET that may be sent elsewhere: a server whose blobs live in object storage answers
/// `307` with a presigned URL on the store's host (`COFFER_S3_PRESIGN=1`), and a manifest may name
/// blob URLs on a CDN that redirects in turn.
///
/// Only blob downloads follow redirects, and only here, above the transport (which never follows
/// one), so every transport behaves the same. A redirect is followed when it is 301, 302, 303, 307
/// or 308 with a `Location` that is a printable ASCII URL (resolved against the URL that answered)
/// on `http` or `https`, with a host and no user name or password, and not from `https` to `http`;
/// at most ``maximumHops`` of them for one request. Anything else is a ``Refusal``.
///
/// The request sent to the new address is made afresh: only `Range`, `Accept-Encoding` and the
/// timeout are carried over, so no `Authorization`, credential or cookie header ever travels with
/// a redirect. Nothing from the redirect is trusted: the bytes must still have the SHA-256 the
/// caller expects, whoever served them.
///
/// The target is not remembered for the next piece: each request asks the blob's own URL again.
/// Presigned URLs expire (after about five minutes), a piece is large (64 MiB in the SDK, 8 MiB in
/// the CLI), and one extra small round trip per piece is cheaper than handling an expired target;
/// the server stays the one that says where a blob is (docs/adr/0005-blob-redirects.md).
package enum BlobRedirect {
    /// The most redirects one request follows; the next one is refused.
    package static let maximumHops = 3

    /// The statuses that send a GET elsewhere (303 turns any method into GET; a blob request is one).
    static let followed: Set<Int> = [301, 302, 303, 307, 308]

    /// The most body bytes a redirect answer may have (they are read and dropped).
    static let bodyLimit = 64 << 10

    /// A redirect that is not followed: why, and the status of the answer that asked for it.
    package struct Refusal: Error, Sendable, Equatable {
        package let status: Int
        package let reason: String
    }

    /// Sends the blob request `request` through `transport`, following redirects as described
    /// above; `consume` gets the body of the final answer only. Returns that answer.
    package static func stream(_ request: URLRequest, through transport: any CofferTransport,
                               consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) async throws -> HTTPURLResponse {
        var current = request
        var hops = 0
        while true {
            let dropped = DroppedBody()
            let response = try await transport.stream(current) { response, piece in
                if followed.contains(response.statusCode) {
                    try dropped.add(piece.count, status: response.statusCode)
                } else {
                    try consume(response, piece)
                }
            }
            guard followed.contains(response.statusCode) else { return response }
            guard hops < maximumHops else {
                throw Refusal(status: response.statusCode, reason: "the blob request was redirected more than \(maximumHops) times")
            }
            guard let from = current.url else { throw URLError(.badURL) }
            let next = try target(of: response.value(forHTTPHeaderField: "Location"), from: from, status: response.statusCode)
            current = request.redirected(to: next)
            hops += 1
        }
    }

    /// Where a redirect from `url` with `location` leads, or why it is not followed.
    static func target(of location: String?, from url: URL, status: Int) throws(Refusal) -> URL {
        guard let location, !location.isEmpty else {
            throw Refusal(status: status, reason: "a redirect without a Location")
        }
        // Printable ASCII only: Foundation would percent-encode spaces and other bytes it does not
        // expect, turning a garbled header into some URL.
        guard location.utf8.count <= 8192, location.utf8.allSatisfy({ (0x21...0x7E).contains($0) }),
              let target = URL(string: location, relativeTo: url)?.absoluteURL
        else {
            throw Refusal(status: status, reason: "a redirect to an unusable Location")
        }
        let scheme = target.scheme?.lowercased() ?? ""
        guard scheme == "https" || scheme == "http" else {
            throw Refusal(status: status, reason: "a redirect to a \(PrintableText.sanitized(scheme, limit: 16)): URL")
        }
        guard let host = target.host, !host.isEmpty else {
            throw Refusal(status: status, reason: "a redirect to an unusable Location")
        }
        guard !(url.scheme?.lowercased() == "https" && scheme == "http") else {
            throw Refusal(status: status, reason: "a redirect from https to http")
        }
        guard target.user == nil, target.password == nil else {
            throw Refusal(status: status, reason: "a redirect to a URL with a user name or password")
        }
        return target
    }
}

extension URLRequest {
    /// A new GET of `url` with only this request's Range, Accept-Encoding and timeout: none of its
    /// other headers (Authorization, credentials, cookies) travels with a redirect.
    fileprivate func redirected(to url: URL) -> URLRequest {
        var request = URLRequest(url: url)
        request.timeoutInterval = timeoutInterval
        for name in ["Range", "Accept-Encoding"] {
            if let value = value(forHTTPHeaderField: name) { request.setValue(value, forHTTPHeaderField: name) }
        }
        return request
    }
}

/// Counts the body of a redirect answer, which is dropped; a long one stops the request.
private final class DroppedBody: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func add(_ bytes: Int, status: Int) throws {
        try lock.withLock {
            guard bytes <= BlobRedirect.bodyLimit - count else {
                throw BlobRedirect.Refusal(status: status, reason: "a redirect with a body over \(BlobRedirect.bodyLimit >> 10) KiB")
            }
            count += bytes
        }
    }
}
