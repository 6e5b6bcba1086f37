import Vapor

/// Flushes the ``UsageCounter`` every `interval` while the server runs, and once more at
/// shutdown (before the database closes). Errors are logged by type and retried at the next flush.
struct UsageFlushService: LifecycleHandler {
    let counter: UsageCounter
    let interval: TimeInterval
    private let task = TaskBox()

    init(counter: UsageCounter, interval: TimeInterval) {
        self.counter = counter
        self.interval = interval
    }

    func didBoot(_ app: Application) throws {
        let counter = self.counter, interval = self.interval
        let database = app.db, logger = app.logger
        task.set(Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(interval))
                guard !Task.isCancelled else { return }
                do { try await counter.flush(on: database) } catch {
                    logger.warning("usage counts not flushed; kept for the next try", metadata: ["type": "\(type(of: error))"])
                }
            }
        })
    }

    func shutdownAsync(_ app: Application) async {
        task.cancel()
        do { try await counter.flush(on: app.db) } catch {
            app.logger.warning("usage counts lost at shutdown", metadata: ["type": "\(type(of: error))", "count": "\(counter.pendingCount)"])
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
    }
}
