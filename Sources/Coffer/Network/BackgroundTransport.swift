import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The ``CofferTransport`` of model pieces when ``BackgroundDownloads`` are on: download tasks of a
/// background `URLSession`, whose finished files wait in ``StagedPieces`` until a request adopts them.
///
/// A request for a piece is answered, in this order, by a finished piece in the staging folder, by
/// the running task that already downloads it (found again by its key after a relaunch), or by a
/// new download task (from the system's resume data when an earlier one was interrupted). When the
/// Swift task waiting for a piece is cancelled — the app's background time ran out — the download
/// goes on; its file is adopted by a later request.
///
/// Background sessions follow redirects themselves, so a presigned or CDN redirect is followed by
/// the system (``BlobRedirect``'s https-to-http refusal cannot apply; the SHA-256 check does).
final class BackgroundTransport: NSObject, CofferTransport, URLSessionDownloadDelegate, @unchecked Sendable {
    let settings: BackgroundDownloads
    let pieces: StagedPieces
    private var session: URLSession!
    private let lock = NSLock()
    /// Keys with a task in the session; nil until the session's tasks were listed.
    private var running: Set<String>?
    /// How many finished pieces requests adopted (for the tests).
    private var adopted = 0
    /// Keys whose task ended before the session's task list arrived.
    private var endedBeforeAttach: Set<String> = []
    private var attachWaiters: [CheckedContinuation<Void, Never>] = []
    /// Who waits for which key, by a token each.
    private var waiters: [String: [UUID: CheckedContinuation<Void, any Error>]] = [:]
    /// The blob sizes ``prefetch(_:total:)`` was told, by key: a `200` may carry that many bytes.
    private var totals: [String: UInt64] = [:]
    /// Keys whose download was stopped for sending more than its request can use.
    private var oversized: Set<String> = []
    /// Keys a request has waited for since their task started: a prefetched piece the download
    /// now waits for may take a whole blob's `200`, as a piece asked on demand may.
    private var waited: Set<String> = []

    /// A transport over a new session with `settings`' identifier (one per identifier and process:
    /// ``BackgroundSessions`` keeps them).
    init(settings: BackgroundDownloads, timeout: TimeInterval) {
        self.settings = settings
        pieces = StagedPieces(folder: settings.stagingDirectory)
        super.init()
        pieces.sweep(olderThan: 7 * 86_400)
        session = URLSession(configuration: Self.configuration(settings, timeout: timeout), delegate: self, delegateQueue: nil)
        session.getAllTasks { [self] tasks in
            let live = tasks.filter { $0.state == .running || $0.state == .suspended }
            // A task the system left suspended would never finish on its own.
            for task in live where task.state == .suspended { task.resume() }
            let waiting = lock.withLock {
                // A task that ended before this list arrived is not running, whatever the list says.
                running = Set(live.compactMap { StagedPieces.described($0.taskDescription)?.key }).subtracting(endedBeforeAttach)
                endedBeforeAttach = []
                defer { attachWaiters = [] }
                return attachWaiters
            }
            for waiter in waiting { waiter.resume() }
        }
    }

    /// The session's configuration: a background one on Apple platforms with the app's knobs.
    static func configuration(_ settings: BackgroundDownloads, timeout: TimeInterval) -> URLSessionConfiguration {
        #if canImport(Darwin)
        let configuration = URLSessionConfiguration.background(withIdentifier: settings.identifier)
        configuration.sessionSendsLaunchEvents = true
        // An app extension's background session must name an App Group container.
        configuration.sharedContainerIdentifier = settings.sharedContainerIdentifier
        configuration.allowsExpensiveNetworkAccess = settings.allowsExpensiveNetworkAccess
        configuration.allowsConstrainedNetworkAccess = settings.allowsConstrainedNetworkAccess
        #else
        let configuration = URLSessionConfiguration.default
        #endif
        configuration.allowsCellularAccess = settings.allowsCellularAccess
        configuration.isDiscretionary = settings.isDiscretionary
        configuration.keepNothing(timeout: timeout)
        return configuration
    }

    /// Waits until the session's tasks from before this launch are known.
    private func attached() async {
        await withCheckedContinuation { continuation in
            let ready = lock.withLock {
                if running != nil { return true }
                attachWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func stream(_ request: URLRequest, consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) async throws -> HTTPURLResponse {
        let key = StagedPieces.key(for: request)
        await attached()
        while true {
            if let (response, body) = pieces.piece(key) {
                defer { pieces.discard(key) }
                lock.withLock { adopted += 1 }
                try StagedPieces.feed(body, response: response, to: consume)
                return response
            }
            try Task.checkCancellation()
            try await finished(key, request)
        }
    }

    /// Hands the system a download task for each request that has neither a finished piece nor a
    /// running task, so all of a model's pieces move while the app is suspended. `total` is the
    /// blob's size: no answer may leave more (a `206`, no more than its range; a `200` the whole
    /// blob only for the first request, which the download waits for next).
    func prefetch(_ requests: [URLRequest], total: UInt64) async {
        await attached()
        for (index, request) in requests.enumerated() {
            let key = StagedPieces.key(for: request)
            lock.withLock { totals[key] = total }
            guard pieces.piece(key) == nil, lock.withLock({ running?.insert(key).inserted ?? false }) else { continue }
            // The first is the piece the download waits for next (from where its file ends).
            start(request, key: key, prefetched: index > 0)
        }
    }

    /// Waits until `key`'s download ends (starting it if nothing runs it); a cancelled wait leaves
    /// the download running.
    private func finished(_ key: String, _ request: URLRequest) async throws {
        let token = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let start = lock.withLock {
                    waiters[key, default: [:]][token] = continuation
                    waited.insert(key)
                    return running?.insert(key).inserted ?? true
                }
                if start {
                    // The piece may have finished between the caller's look and this wait: then it
                    // is adopted, not downloaded twice.
                    if pieces.piece(key) != nil { wake(key, error: nil) } else { self.start(request, key: key) }
                }
                // Cancelled before the waiter was registered: onCancel found nothing to resume.
                if Task.isCancelled, let waiter = lock.withLock({ waiters[key]?.removeValue(forKey: token) }) {
                    waiter.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            lock.withLock { waiters[key]?.removeValue(forKey: token) }?.resume(throwing: CancellationError())
        }
    }

    /// Whether an interrupted task's resume data is worth keeping: only when the task was not
    /// redirected. Resume data replays the request being answered, and a redirect's target (a
    /// presigned object-storage URL) expires within minutes; the URL the SDK asked for redirects
    /// to a fresh one, so a redirected piece starts again from there.
    static func keepsResumeData(asked: URL?, answering: URL?) -> Bool {
        guard let asked else { return false }
        return asked == answering
    }

    /// How many finished pieces requests have adopted so far.
    var adoptedPieces: Int { lock.withLock { adopted } }

    /// Whether a task of the session downloads `key`'s piece.
    func isDownloading(_ key: String) -> Bool { lock.withLock { running?.contains(key) ?? false } }

    /// Starts `request`'s download; a `prefetched` piece (asked ahead of need) may not take a whole
    /// blob's `200` unless it starts at byte 0 (``StagedPieces/limit(status:asked:total:waits:)``).
    private func start(_ request: URLRequest, key: String, prefetched: Bool = false) {
        let task: URLSessionDownloadTask
        #if canImport(Darwin)
        if let resume = pieces.takeResumeData(key) {
            task = session.downloadTask(withResumeData: resume)
        } else {
            task = session.downloadTask(with: request)
        }
        #else
        task = session.downloadTask(with: request)
        #endif
        task.taskDescription = StagedPieces.describe(key: key, total: lock.withLock { totals[key] }, prefetched: prefetched)
        task.resume()
    }

    /// Whoever waits for `key` hears that its download ended (with `error`, or staged).
    private func wake(_ key: String, error: (any Error)?) {
        let waiting = lock.withLock {
            if error == nil { totals[key] = nil }
            waited.remove(key)
            if running == nil { endedBeforeAttach.insert(key) } else { running?.remove(key) }
            return waiters.removeValue(forKey: key) ?? [:]
        }
        for waiter in waiting.values {
            if let error { waiter.resume(throwing: error) } else { waiter.resume() }
        }
    }

    // MARK: URLSessionDownloadDelegate

    /// The most bytes `task`'s body may have (``StagedPieces/limit(status:asked:total:waits:)``),
    /// once its answer's status is known. A prefetched piece is waited for once a request waits
    /// for its key.
    private func limit(of task: URLSessionTask) -> UInt64? {
        guard let response = task.response as? HTTPURLResponse else { return nil }
        let described = StagedPieces.described(task.taskDescription)
        let waits = described.map { task in !task.prefetched || lock.withLock { waited.contains(task.key) } } ?? true
        return StagedPieces.limit(status: response.statusCode, asked: task.originalRequest?.value(forHTTPHeaderField: "Range"),
                                  total: described?.total, waits: waits)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        // A body longer than the request can use (an endless one from a hostile mirror) is
        // stopped here, before it fills the disk.
        guard let limit = limit(of: downloadTask), totalBytesWritten > 0, UInt64(totalBytesWritten) > limit,
              let key = StagedPieces.described(downloadTask.taskDescription)?.key else { return }
        lock.withLock { _ = oversized.insert(key) }
        downloadTask.cancel()
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        guard let key = StagedPieces.described(downloadTask.taskDescription)?.key,
              let response = downloadTask.response as? HTTPURLResponse else { return }
        // The file must be moved before this returns; a failure is heard by the waiter as the
        // missing piece below.
        try? pieces.store(location, response: response, key: key,
                          asked: downloadTask.originalRequest?.value(forHTTPHeaderField: "Range"), limit: limit(of: downloadTask))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let key = StagedPieces.described(task.taskDescription)?.key else { return }
        if lock.withLock({ oversized.remove(key) }) != nil {
            // A prefetched piece stopped at a `200`'s limit that a request began to wait for
            // before its end arrived: asked again on demand (which may take the whole blob), so
            // the waiter does not hear the stopped task's error. At most once: that task is not
            // prefetched.
            if let request = task.originalRequest, StagedPieces.described(task.taskDescription)?.prefetched == true,
               (task.response as? HTTPURLResponse)?.statusCode == 200, lock.withLock({ waited.contains(key) }) {
                start(request, key: key)
            } else {
                wake(key, error: URLError(.dataLengthExceedsMaximum))
            }
        } else if let error {
            #if canImport(Darwin)
            if let resume = (error as? URLError)?.downloadTaskResumeData,
               Self.keepsResumeData(asked: task.originalRequest?.url, answering: task.currentRequest?.url) {
                pieces.storeResumeData(resume, key: key)
            }
            #endif
            wake(key, error: error)
        } else if pieces.piece(key) == nil {
            // No file: an answer without a body to download (a redirect this session did not
            // follow, an error), kept as it is; a 2xx whose file could not be moved is a failure.
            if let response = task.response as? HTTPURLResponse, !(200...299).contains(response.statusCode),
               (try? pieces.storeWithoutBody(response, key: key)) != nil {
                wake(key, error: nil)
            } else {
                wake(key, error: URLError(.cannotWriteToFile))
            }
        } else {
            wake(key, error: nil)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        // Called for foreground sessions only (Linux): the redirect is answered as it is and
        // BlobRedirect follows it above the transport, as with the default transport.
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        completionHandler(.performDefaultHandling, nil)
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        let identifier = settings.identifier
        // UIKit's handler is called on the main thread.
        Task { @MainActor in BackgroundSessions.eventsDelivered(identifier) }
    }
}
