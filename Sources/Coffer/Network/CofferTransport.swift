import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the SDK sends its HTTP requests: manifests, key deliveries and ranges of sealed models.
///
/// The default is URLSession (ephemeral: no cookies, no URL cache, no credential storage). Linux
/// apps and the `coffer` CLI can use ``CofferAsyncHTTPClient``'s `AsyncHTTPClientTransport`
/// instead, whose large body pieces make downloads faster there; iOS apps never build it.
///
/// A transport must not follow redirects (it returns the 3xx answer and its body): the SDK follows
/// one only for a model download, above the transport, with a new request that carries nothing but
/// the Range (no credential, no cookie), at most three in a row, never from https to http; the
/// model must still have the manifest's SHA-256. Manifest, key and report requests never follow
/// one. A transport must not answer authentication challenges, must report network failures as
/// `URLError` (`.timedOut`, `.cannotConnectToHost`, `.cannotFindHost`, `.networkConnectionLost`,
/// `.secureConnectionFailed`, `.cancelled`), and must stop the request when the Swift task is
/// cancelled or `consume` throws.
public protocol CofferTransport: Sendable {
    /// Sends `request`; `consume` is called in order with each piece of the body, after the
    /// response arrived. Returns the response once the body ended. A `timeoutInterval` on the
    /// request is the longest wait for the next bytes, not for the whole body: the SDK bounds a
    /// small request's whole time itself (``CofferConfiguration/requestDeadline``) by cancelling
    /// the task, which the transport must answer by stopping the request. A piece may be
    /// lent from the transport's own buffer (AsyncHTTPClientTransport does): `consume` reads it
    /// during the call, copies what it keeps, and never changes it.
    func stream(_ request: URLRequest, consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) async throws -> HTTPURLResponse
}

extension CofferTransport {
    /// Sends `request` and collects a body of at most `limit` bytes (a longer one is an error).
    func data(_ request: URLRequest, limit: Int) async throws -> (HTTPURLResponse, Data) {
        let body = CollectedBody()
        let response = try await stream(request) { _, piece in try body.append(piece, limit: limit) }
        return (response, body.data)
    }
}

/// A body collected up to a limit.
private final class CollectedBody: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes = Data()

    func append(_ piece: Data, limit: Int) throws {
        try lock.withLock {
            guard bytes.count + piece.count <= limit else { throw BodyTooLarge(limit: limit) }
            bytes.append(piece)
        }
    }

    var data: Data { lock.withLock { bytes } }
}

/// A body longer than the caller allowed; the request was cancelled.
struct BodyTooLarge: Error {
    let limit: Int
}
