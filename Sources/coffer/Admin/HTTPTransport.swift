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
    private let uploads = Uploads()

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

    /// Sends the file at `file` as the request body, read from disk as it goes out; `progress` is
    /// told how many more bytes went out each time some did.
    ///
    /// The task has no completion handler, so the answer comes through the delegate: on Linux a
    /// task with a completion handler never reports the bytes it sent.
    func upload(_ request: URLRequest, fromFile file: URL, progress: (@Sendable (UInt64) -> Void)? = nil) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            let task = session.uploadTask(with: request, fromFile: file)
            uploads.begin(task.taskIdentifier, continuation, progress: progress)
            task.resume()
        }
    }

    private static func answer(_ data: Data?, _ response: URLResponse?, _ error: (any Error)?) -> Result<Answer, any Error> {
        if let error { return .failure(error) }
        guard let response = response as? HTTPURLResponse else { return .failure(URLError(.badServerResponse)) }
        return .success(Answer(response: response, body: data ?? Data()))
    }
}

extension HTTPTransport: URLSessionDataDelegate {
    /// Redirects are refused: the 3xx answer is returned as it is and reported.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        uploads.sent(UInt64(clamping: bytesSent), by: task.taskIdentifier)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        uploads.received(data, by: dataTask.taskIdentifier)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        uploads.finish(task.taskIdentifier, with: Self.answer(nil, task.response, error))
    }
}

/// The uploads in flight, by task: who waits for the answer, the answer's bytes so far, and who
/// wants to hear of progress. Tasks with a completion handler are not in it and are ignored.
private final class Uploads: @unchecked Sendable {
    private struct Upload {
        let continuation: CheckedContinuation<HTTPTransport.Answer, any Error>
        let progress: (@Sendable (UInt64) -> Void)?
        var body = Data()
    }

    private let lock = NSLock()
    private var uploads: [Int: Upload] = [:]

    func begin(_ task: Int, _ continuation: CheckedContinuation<HTTPTransport.Answer, any Error>,
               progress: (@Sendable (UInt64) -> Void)?) {
        lock.withLock { uploads[task] = Upload(continuation: continuation, progress: progress) }
    }

    func sent(_ count: UInt64, by task: Int) {
        lock.withLock { uploads[task]?.progress }?(count)
    }

    func received(_ data: Data, by task: Int) {
        lock.withLock { uploads[task]?.body.append(data) }
    }

    func finish(_ task: Int, with result: Result<HTTPTransport.Answer, any Error>) {
        guard let upload = lock.withLock({ uploads.removeValue(forKey: task) }) else { return }
        upload.continuation.resume(with: result.map { HTTPTransport.Answer(response: $0.response, body: upload.body) })
    }
}
