import Foundation

/// Runs blocking work (waiting for a child process, reading a pipe to its end, a semaphore, a sleep
/// loop) on a thread of its own and suspends the calling task until it ends.
///
/// Every test of `swift test` runs as a task on Swift's cooperative pool, which has one thread per
/// core: two in CI. A test that blocks one of those threads while a child process runs takes it from
/// every other test; two such tests at once froze the whole test process for 150 seconds, long
/// enough for the S3 gateway to give up on a GetObject whose body no task was reading. Blocking work
/// in a test goes through here.
public func offThePool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// ``offThePool(_:)`` for work that cannot fail.
public func offThePool<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}
