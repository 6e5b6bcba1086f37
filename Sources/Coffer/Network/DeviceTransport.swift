import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default ``CofferTransport``: URLSession behind one `async` function that hands the body
/// over as it arrives.
///
/// Ephemeral (no cookies, no URL cache, no credential storage), never follows a redirect (the
/// 3xx answer is returned; model downloads follow one above the transport), and never answers an
/// authentication challenge. A task is cancelled when the Swift task awaiting it is, or when the
/// body consumer throws. The session ends when the last holder of the transport (a client, or an
/// entry that may still fetch a key) lets it go.
final class DeviceTransport: CofferTransport, @unchecked Sendable {
    private var session: URLSession!
    private let running = RunningTasks()

    init(timeout: TimeInterval) {
        let delegate = WeakDelegate()
        delegate.transport = self
        let configuration = URLSessionConfiguration.ephemeral
        configuration.keepNothing(timeout: timeout)
        configuration.httpMaximumConnectionsPerHost = 4
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Sends `request`; `consume` is called in order with each piece of the body, after the
    /// response arrived. Returns the response once the body ended.
    func stream(_ request: URLRequest, consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) async throws -> HTTPURLResponse {
        let task = session.dataTask(with: request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                running.begin(task.taskIdentifier, RunningTasks.Entry(continuation: continuation, consume: consume))
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }
}

/// The session's delegate: it holds the transport weakly, so the session (which holds its
/// delegate) does not keep the transport alive for ever.
private final class WeakDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    weak var transport: DeviceTransport?

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        completionHandler(.performDefaultHandling, nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transport?.received(data, task: dataTask)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        transport?.completed(task, error: error)
    }
}

extension DeviceTransport {
    fileprivate func received(_ data: Data, task: URLSessionDataTask) {
        guard let response = task.response as? HTTPURLResponse else { return }
        if !running.consume(data, response: response, task: task.taskIdentifier) { task.cancel() }
    }

    fileprivate func completed(_ task: URLSessionTask, error: (any Error)?) {
        running.finish(task.taskIdentifier, response: task.response as? HTTPURLResponse, error: error)
    }
}

/// The tasks in flight: who waits for each, and who consumes its body.
private final class RunningTasks: @unchecked Sendable {
    struct Entry {
        let continuation: CheckedContinuation<HTTPURLResponse, any Error>
        let consume: @Sendable (HTTPURLResponse, Data) throws -> Void
        var failure: (any Error)?
    }

    private let lock = NSLock()
    private var entries: [Int: Entry] = [:]

    func begin(_ task: Int, _ entry: Entry) { lock.withLock { entries[task] = entry } }

    /// Hands `data` to the task's consumer; false when it threw (the task is then cancelled and
    /// its waiter gets that error).
    func consume(_ data: Data, response: HTTPURLResponse, task: Int) -> Bool {
        guard let entry = lock.withLock({ entries[task] }), entry.failure == nil else { return false }
        do {
            try entry.consume(response, data)
            return true
        } catch {
            lock.withLock { entries[task]?.failure = error }
            return false
        }
    }

    func finish(_ task: Int, response: HTTPURLResponse?, error: (any Error)?) {
        guard let entry = lock.withLock({ entries.removeValue(forKey: task) }) else { return }
        if let failure = entry.failure {
            entry.continuation.resume(throwing: failure)
        } else if let error {
            entry.continuation.resume(throwing: error)
        } else if let response {
            entry.continuation.resume(returning: response)
        } else {
            entry.continuation.resume(throwing: URLError(.badServerResponse))
        }
    }
}

extension URLSessionConfiguration {
    /// No URL cache, no cookies, no stored credentials, and `timeout` as the longest wait for the
    /// next bytes: what every session of the SDK uses.
    func keepNothing(timeout: TimeInterval) {
        requestCachePolicy = .reloadIgnoringLocalCacheData
        urlCache = nil
        httpCookieStorage = nil
        httpShouldSetCookies = false
        urlCredentialStorage = nil
        timeoutIntervalForRequest = timeout
    }
}
