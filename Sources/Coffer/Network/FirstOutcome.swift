import Foundation

/// The first of several outcomes racing for one caller — a request's answer, its deadline, the
/// caller's cancellation (``RequestDeadline/run(_:)``) — handed to that caller exactly once; the
/// later ones are dropped.
///
/// The caller waits in ``value()``, which may start before or after the first ``finish(_:)``: both
/// happen under one lock, so the caller's continuation is resumed once, by whichever comes second.
final class FirstOutcome<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: Result<T, any Error>?
    private var waiting: CheckedContinuation<T, any Error>?

    /// Hands `outcome` to the caller unless an earlier one was.
    func finish(_ outcome: Result<T, any Error>) {
        let caller = lock.withLock { () -> CheckedContinuation<T, any Error>? in
            guard self.outcome == nil else { return nil }
            self.outcome = outcome
            defer { waiting = nil }
            return waiting
        }
        caller?.resume(with: outcome)
    }

    /// The first outcome, once there is one.
    func value() async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let ready = lock.withLock { () -> Result<T, any Error>? in
                if let outcome = self.outcome { return outcome }
                self.waiting = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
