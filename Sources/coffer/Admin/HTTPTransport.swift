import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession behind `async` functions, written over completion handlers (the async URLSession
/// APIs are not all present on Linux).
///
/// One ephemeral session per command (no cookies, no cache) that never follows a redirect, so
/// the bearer token only ever goes to the server it was given for.
final class HTTPTransport: NSObject, @unchecked Sendable {
    /// A response and its whole body.
    struct Answer: Sendable {
        let response: HTTPURLResponse
        let body: Data
    }

    private var session: URLSession!

    override init() {
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCredentialStorage = nil
        configuration.timeoutIntervalForRequest = 120
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// Sends a request and collects the response (JSON answers, and blob pieces of bounded size).
    func send(_ request: URLRequest) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                continuation.resume(with: Self.answer(data, response, error))
            }.resume()
        }
    }

    /// Sends the file at `file` as the request body, read from disk as it goes out.
    func upload(_ request: URLRequest, fromFile file: URL) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            session.uploadTask(with: request, fromFile: file) { data, response, error in
                continuation.resume(with: Self.answer(data, response, error))
            }.resume()
        }
    }

    private static func answer(_ data: Data?, _ response: URLResponse?, _ error: (any Error)?) -> Result<Answer, any Error> {
        if let error { return .failure(error) }
        guard let response = response as? HTTPURLResponse else { return .failure(URLError(.badServerResponse)) }
        return .success(Answer(response: response, body: data ?? Data()))
    }
}

extension HTTPTransport: URLSessionTaskDelegate {
    /// Redirects are refused: the 3xx answer is returned as it is and reported.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
