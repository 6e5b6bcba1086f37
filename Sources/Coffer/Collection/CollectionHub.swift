import Foundation

/// What one ``CofferClient`` shares between callers: the update in flight per collection (so
/// concurrent `beginAccessing` calls share one download). The models in use are the process's,
/// shared by every client on a cache folder (``ModelsInUse``).
actor CollectionHub {
    private struct Flight {
        let task: Task<CollectionUpdater.Outcome, any Error>
        let progress: DownloadProgress
        var waiters: [UUID: CheckedContinuation<CollectionUpdater.Outcome, any Error>] = [:]
        /// A background update runs to its end even when nobody waits for it.
        var background: Bool
        /// Cancelled because nobody waited any more: a new caller waits for it to end and starts
        /// an update of its own instead of being handed this one's cancellation.
        var abandoned = false
    }

    private var flights: [String: Flight] = [:]

    /// The work of one update: the client's updater, which also announces a switch.
    typealias Work = @Sendable (DownloadProgress) async throws(SyncFailure) -> CollectionUpdater.Outcome

    /// Waits for the update of `identifier` in flight, or starts one with `work`. When the caller
    /// is cancelled it stops waiting at once; the update itself is cancelled when nobody waits for
    /// it any more (its download stays resumable), unless it was started in the background.
    func update(_ identifier: String, progress: Foundation.Progress? = nil, work: @escaping Work) async throws -> CollectionUpdater.Outcome {
        await outlastAbandoned(identifier)
        if flights[identifier] == nil { begin(identifier, background: false, work: work) }
        let waiter = UUID()
        if let progress { flights[identifier]?.progress.observe(progress) }
        let shared = flights[identifier]?.progress
        defer { if let progress { shared?.forget(progress) } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: SyncFailure.cancelled)
                } else {
                    flights[identifier]?.waiters[waiter] = continuation
                }
            }
        } onCancel: {
            Task { await self.leave(identifier, waiter) }
        }
    }

    /// Starts an update in the background unless one is in flight; returns at once.
    func updateInBackground(_ identifier: String, work: @escaping Work) {
        if let flight = flights[identifier], flight.abandoned {
            Task { await self.outlastAbandoned(identifier); self.updateInBackground(identifier, work: work) }
        } else if flights[identifier] == nil {
            begin(identifier, background: true, work: work)
        }
    }

    /// Returns once the update of `identifier` in flight, if any, is not an abandoned one (its
    /// cancellation already reached the download; it ends soon and releases the collection's update lock).
    private func outlastAbandoned(_ identifier: String) async {
        while let flight = flights[identifier], flight.abandoned { _ = try? await flight.task.value }
    }

    /// Returns once no update of `identifier` is in flight (one started meanwhile is waited for too).
    func settled(_ identifier: String) async {
        while let task = flights[identifier]?.task { _ = try? await task.value }
    }

    private func begin(_ identifier: String, background: Bool, work: @escaping Work) {
        let shared = DownloadProgress()
        let task = Task<CollectionUpdater.Outcome, any Error> {
            let result: Result<CollectionUpdater.Outcome, any Error>
            do {
                result = .success(try await work(shared))
            } catch {
                result = .failure(error)
            }
            self.land(identifier, result)
            return try result.get()
        }
        flights[identifier] = Flight(task: task, progress: shared, background: background)
    }

    private func leave(_ identifier: String, _ waiter: UUID) {
        guard let continuation = flights[identifier]?.waiters.removeValue(forKey: waiter) else { return }
        continuation.resume(throwing: SyncFailure.cancelled)
        if let flight = flights[identifier], flight.waiters.isEmpty, !flight.background {
            flights[identifier]?.abandoned = true
            flight.task.cancel()
        }
    }

    private func land(_ identifier: String, _ result: Result<CollectionUpdater.Outcome, any Error>) {
        guard let flight = flights.removeValue(forKey: identifier) else { return }
        for continuation in flight.waiters.values { continuation.resume(with: result) }
    }
}
