import Fluent
import Vapor

/// Work the server repeats every `interval` while it runs (blob collection, flushing usage
/// counts), started when the application boots and cancelled when it shuts down; an optional
/// last run at shutdown, before the database closes. Errors are logged by type only and the work
/// is tried again at the next interval. When `again` says more is already waiting after a run
/// that succeeded, the next run starts after a short pause (``followUpPause`` unless given) instead
/// of the interval.
struct PeriodicWork: LifecycleHandler {
    /// One run of the work: what to log when it fails.
    typealias Run = @Sendable (_ db: any Database, _ logger: Logger) async throws -> Void

    let interval: TimeInterval
    /// The wait before the first run (the interval unless given).
    let firstRunAfter: TimeInterval
    let failure: Logger.Message
    let run: Run
    let atShutdown: Run?
    let again: (@Sendable () -> Bool)?
    /// The pause before a run that `again` asked for.
    let pauseBeforeAgain: TimeInterval
    private let task = TaskBox()

    /// The pause before a run that follows at once (at most the interval), on SQLite: its busy
    /// handler tries again every 100 ms at most, so a writer waiting behind back-to-back report
    /// flushes (a sign-in, an upload's registration) finds the lock free within it. PostgreSQL
    /// locks rows, not the database, and needs none.
    static let followUpPause: TimeInterval = 0.15

    init(every interval: TimeInterval, firstRunAfter: TimeInterval? = nil, failure: Logger.Message, atShutdown: Run? = nil,
         again: (@Sendable () -> Bool)? = nil, pauseBeforeAgain: TimeInterval = PeriodicWork.followUpPause, run: @escaping Run) {
        self.interval = interval
        self.firstRunAfter = firstRunAfter ?? interval
        self.failure = failure
        self.run = run
        self.atShutdown = atShutdown
        self.again = again
        self.pauseBeforeAgain = pauseBeforeAgain
    }

    func didBoot(_ app: Application) throws {
        let run = self.run, interval = self.interval, first = self.firstRunAfter, failure = self.failure, again = self.again
        let pauseBeforeAgain = self.pauseBeforeAgain
        let database = app.db, logger = app.logger
        task.set(Task {
            var pause = first
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(pause))
                guard !Task.isCancelled else { return }
                do {
                    try await run(database, logger)
                    // Work that piled up while the run lasted (device reports under load) goes
                    // almost at once: sleeping the interval left the database idle between runs
                    // while the backlog grew.
                    pause = again?() == true ? min(interval, pauseBeforeAgain) : interval
                } catch {
                    // After a failure the interval passes (no loop against a database that is down).
                    pause = interval
                    logger.warning(failure, metadata: ["type": "\(type(of: error))"])
                }
            }
        })
    }

    func shutdownAsync(_ app: Application) async {
        // A run in progress finishes before the database closes: one that was still asking for a
        // connection while the pool shut down left an unclosed SQLite connection behind (in debug
        // builds, sqlite-nio's deinit asserts and the process stops).
        await task.cancelAndWait()
        guard let atShutdown else { return }
        do { try await atShutdown(app.db, app.logger) } catch {
            app.logger.warning(failure, metadata: ["type": "\(type(of: error))", "at": "shutdown"])
        }
    }

    func shutdown(_ app: Application) {
        task.cancel()
    }

    private final class TaskBox: @unchecked Sendable {
        private let lock = NSLock()
        private var task: Task<Void, Never>?
        func set(_ task: Task<Void, Never>) { lock.withLock { self.task = task } }
        func cancel() { lock.withLock { task?.cancel() } }
        func cancelAndWait() async {
            let task = lock.withLock { self.task }
            task?.cancel()
            await task?.value
        }
    }
}
