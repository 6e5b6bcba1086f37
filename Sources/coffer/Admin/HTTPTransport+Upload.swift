import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPTransport {
    /// Sends the file at `file` as the request body, read from disk as it goes out; `progress` is
    /// told how many more bytes went out each time some did. The answer is collected up to `limit`.
    ///
    /// Uploads still go through a URLSession upload task (it reads the file as it sends, and
    /// reports progress); the SDK's ``CofferTransport`` has no request-body stream yet. The answer
    /// is bounded like every other one.
    func upload(_ request: URLRequest, fromFile file: URL, limit: Int = HTTPTransport.answerLimit,
                progress: (@Sendable (UInt64) -> Void)? = nil) async throws -> Answer {
        let uploader = FileUploader(limit: limit, progress: progress)
        defer { uploader.finish() }
        return try await uploader.send(request, fromFile: file)
    }
}

/// One upload over an ephemeral URLSession that never follows a redirect.
///
/// The task has no completion handler, so the answer comes through the delegate: on Linux a
/// task with a completion handler never reports the bytes it sent.
private final class FileUploader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let limit: Int
    private let progress: (@Sendable (UInt64) -> Void)?
    private let lock = NSLock()
    private var session: URLSession!
    private var continuation: CheckedContinuation<HTTPTransport.Answer, any Error>?
    private var body = Data()
    private var failure: (any Error)?

    init(limit: Int, progress: (@Sendable (UInt64) -> Void)?) {
        self.limit = limit
        self.progress = progress
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

    func send(_ request: URLRequest, fromFile file: URL) async throws -> HTTPTransport.Answer {
        try await withCheckedThrowingContinuation { continuation in
            let task = session.uploadTask(with: request, fromFile: file)
            lock.withLock { self.continuation = continuation }
            task.resume()
        }
    }

    func finish() { session.finishTasksAndInvalidate() }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        progress?(UInt64(clamping: bytesSent))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let tooLarge = lock.withLock { () -> Bool in
            guard failure == nil else { return false }
            guard data.count <= limit - body.count else {
                failure = HTTPTransport.AnswerTooLarge(limit: limit)
                return true
            }
            body.append(data)
            return false
        }
        if tooLarge { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (waiter, body, failure) = lock.withLock { () -> (CheckedContinuation<HTTPTransport.Answer, any Error>?, Data, (any Error)?) in
            defer { continuation = nil }
            return (continuation, self.body, self.failure)
        }
        guard let waiter else { return }
        if let failure {
            waiter.resume(throwing: failure)
        } else if let error {
            waiter.resume(throwing: error)
        } else if let response = task.response as? HTTPURLResponse {
            waiter.resume(returning: HTTPTransport.Answer(response: response, body: body))
        } else {
            waiter.resume(throwing: URLError(.badServerResponse))
        }
    }
}
