import Coffer
import CofferAsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The admin commands' HTTP: the SDK's streaming ``CofferTransport`` over AsyncHTTPClient, the
/// same stack `coffer sync` uses, so no body is ever held whole unless it is small by contract.
///
/// The transport never follows a redirect (the 3xx answer is returned and reported; only a blob
/// download's GET follows one, above it, without the token), keeps no cookies, and sends nothing
/// but the request's own headers, so the bearer token only ever goes to the server it was given for. Each body piece is handed over before the next is read
/// (back-pressure), which is what keeps a download's memory bounded whatever the server sends.
final class HTTPTransport: Sendable {
    /// A response and its body, which is at most the limit the request was sent with.
    struct Answer: Sendable {
        let response: HTTPURLResponse
        let body: Data
    }

    /// The most an answer collected whole may hold: JSON answers, error bodies, model keys.
    /// The API's largest (a page of an audit log, a deployment list) are well under it.
    static let answerLimit = 4 << 20

    /// An answer longer than the limit it was read with; the request was stopped.
    struct AnswerTooLarge: Error {
        let limit: Int
    }

    /// Concrete, not `any CofferTransport`: uploads use its request-body stream, which the
    /// protocol does not have.
    let transport: AsyncHTTPClientTransport

    init(timeout: TimeInterval = 120) {
        transport = AsyncHTTPClientTransport(timeout: timeout)
    }

    /// Sends a request and collects its body, refusing one longer than `limit` bytes (the request
    /// is stopped as soon as the limit is passed: an endless answer costs at most `limit`).
    func send(_ request: URLRequest, limit: Int = HTTPTransport.answerLimit) async throws -> Answer {
        let body = CollectedBody(limit: limit)
        let response = try await transport.stream(request) { _, piece in try body.append(piece) }
        return Answer(response: response, body: body.data)
    }

    /// Sends a request and hands each piece of the body to `consume` as it arrives; the next
    /// piece is read only once `consume` returned. A throw from `consume` stops the request and
    /// is rethrown.
    func stream(_ request: URLRequest, consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) async throws -> HTTPURLResponse {
        try await transport.stream(request, consume: consume)
    }
}

/// A body collected up to a limit.
final class CollectedBody: @unchecked Sendable {
    private let lock = NSLock()
    private let limit: Int
    private var bytes = Data()

    init(limit: Int) { self.limit = limit }

    func append(_ piece: Data) throws {
        try lock.withLock {
            guard piece.count <= limit - bytes.count else { throw HTTPTransport.AnswerTooLarge(limit: limit) }
            bytes.append(piece)
        }
    }

    var data: Data { lock.withLock { bytes } }
}
