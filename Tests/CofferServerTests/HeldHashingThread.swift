import BlockingTestSupport
import Foundation
import NIOCore
import NIOPosix

@testable import CofferServer

/// The only thread of a one-thread Bcrypt pool, held by a test until ``release()``: hashes admitted
/// meanwhile wait in the queue, so a test fills the queue without racing the hashes it admitted.
///
/// The hold is handed to the pool at once, from the initialiser, not from a new task: on a loaded
/// machine a task may wait for a free thread of the cooperative pool longer than the test waits
/// for the hold (seen in CI: "not free within 30 s" while the Bcrypt thread was idle).
final class HeldHashingThread: Sendable {
    private let gate: DispatchSemaphore
    private let held: EventLoopFuture<Void>

    /// Holds `hashing`'s thread (outside its count of hashes); returns once it is held.
    init(_ hashing: PasswordHashing) async throws {
        let gate = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        self.gate = gate
        held = hashing.pool.runIfActive(eventLoop: MultiThreadedEventLoopGroup.singleton.next()) { started.signal(); gate.wait() }
        guard await offThePool({ started.wait(timeout: .now() + 30) == .success }) else {
            gate.signal()  // should the hold start after all, it ends at once
            throw TestFailure("the Bcrypt pool's thread was not free within 30 s")
        }
    }

    deinit { gate.signal() }  // a test that failed before ``release()`` does not keep the thread

    /// Lets the thread go; the hashes waiting run.
    func release() async throws {
        gate.signal()
        try await held.get()
    }
}

/// Waits until `condition` holds, checking every millisecond; fails after a minute. What a test
/// judges is the state it waited for, never how long that took.
func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
    for _ in 0..<60_000 {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(1))
    }
    throw TestFailure("still not \(what) after a minute")
}
