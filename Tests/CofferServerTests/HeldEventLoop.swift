import Foundation
import NIOCore
import NIOPosix

/// The only thread of a one-thread event loop group, held by a test until ``release()``: whatever
/// is given to ``loop`` meanwhile (a body writer's writes, their futures' callbacks) waits in its
/// queue. Work that must write through the loop to end cannot end, so a test can look at what it
/// holds while it runs without racing its end.
final class HeldEventLoop: Sendable {
    /// The loop whose thread is held.
    let loop: any EventLoop
    private let group: MultiThreadedEventLoopGroup
    private let gate = DispatchSemaphore(value: 0)

    /// Holds a new loop's thread: tasks run on it only after ``release()`` (they queue behind the
    /// one holding it, as a loop runs its tasks in order).
    init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
        let gate = gate
        loop.execute { gate.wait() }
    }

    deinit { gate.signal() }  // a test that failed before ``release()`` does not keep the thread

    /// Lets the thread go: what waited runs, and what comes later runs at once.
    func release() {
        gate.signal()
    }

    /// Lets the thread go, if it is still held, and shuts the group down once what is queued has run.
    func close() async throws {
        gate.signal()
        try await group.shutdownGracefully()
    }
}
