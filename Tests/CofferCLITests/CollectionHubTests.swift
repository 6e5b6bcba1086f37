@testable import Coffer
import Foundation
import Testing

/// The hub that lets concurrent callers share one update of a collection.
@Suite struct CollectionHubTests {
    @Test("a caller after a cancelled update gets an update of its own, not that one's cancellation")
    func abandonedUpdate() async throws {
        let hub = CollectionHub()
        let (started, released) = (OneShot(), OneShot())
        let first = Task {
            try await hub.update("FlowerModels") { _ async throws(SyncFailure) -> CollectionUpdater.Outcome in
                started.open()
                // Like a download a proxy holds back: it sees its cancellation only once bytes come.
                await released.wait()
                throw Task.isCancelled ? .cancelled : .cache("the first update")
            }
        }
        await started.wait()
        first.cancel()
        #expect(Self.reason(await first.result) == "cancelled")

        let second = Task {
            try await hub.update("FlowerModels") { _ async throws(SyncFailure) -> CollectionUpdater.Outcome in
                throw .cache("the second update")
            }
        }
        // The second caller comes while the abandoned update still runs (then it ends).
        try await Task.sleep(nanoseconds: 200_000_000)
        released.open()
        #expect(Self.reason(await second.result) == "the second update")
    }

    private static func reason(_ result: Result<CollectionUpdater.Outcome, any Error>) -> String {
        switch result {
        case .success: return "no failure"
        case .failure(SyncFailure.cancelled): return "cancelled"
        case .failure(SyncFailure.cache(let reason)): return reason
        case .failure(let error): return "\(error)"
        }
    }
}

/// Opens once; `wait()` returns after that, and does not end early when its task is cancelled.
private final class OneShot: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if isOpen {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }

    func open() {
        lock.lock()
        isOpen = true
        let waiting = waiters
        waiters = []
        lock.unlock()
        for continuation in waiting { continuation.resume() }
    }
}
