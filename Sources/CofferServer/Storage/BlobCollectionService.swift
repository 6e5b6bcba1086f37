import Vapor

/// Runs ``BlobCollector`` every `interval` while the server runs; errors are logged and retried.
struct BlobCollectionService: LifecycleHandler {
    let collector: BlobCollector
    let interval: TimeInterval
    private let task = TaskBox()

    init(collector: BlobCollector, interval: TimeInterval) {
        self.collector = collector
        self.interval = interval
    }

    func didBoot(_ app: Application) throws {
        let collector = self.collector, interval = self.interval
        let database = app.db, logger = app.logger
        task.set(Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(interval))
                guard !Task.isCancelled else { return }
                do {
                    let removed = try await collector.collect(on: database)
                    if !removed.isEmpty { logger.info("collected \(removed.count) unreferenced blobs") }
                } catch {
                    logger.warning("blob collection failed: \(type(of: error))")
                }
            }
        })
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

extension Server {
    /// `coffer-server collect-blobs`: one collection now; returns a line saying what was removed.
    public static func collectBlobs(_ configuration: ServerConfiguration) async throws -> String {
        let app = try await Application.make(Environment(name: "production", arguments: ["coffer-server"]))
        do {
            try await configureDatabase(app, configuration)
            let collector = BlobCollector(store: try BlobStore(root: configuration.resolvedBlobDirectory), grace: configuration.blobGracePeriod)
            let removed = try await collector.collect(on: app.db)
            try await app.asyncShutdown()
            return "removed \(removed.count) unreferenced blobs" + (removed.isEmpty ? "" : ": " + removed.joined(separator: ", "))
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
    }
}
