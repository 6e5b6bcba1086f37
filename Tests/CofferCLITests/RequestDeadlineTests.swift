import BlockingTestSupport
@testable import Coffer
import Foundation
import Testing

/// ``RequestDeadline`` against work that does not stop when cancelled, as a transport slow to
/// notice (FoundationNetworking's URLSession on Linux) or an app's own ``CofferTransport`` that
/// ignores cancellation: the caller must get its answer at the deadline, not when the work ends.
@Suite("The request deadline")
struct RequestDeadlineTests {
    @Test("work that ignores cancellation is given up at the deadline, before it ends")
    func returnsAtTheDeadline() async throws {
        let ended = AdminBox(false)
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        do {
            _ = try await RequestDeadline(seconds: 0.3).run { () async throws -> Int in
                // A wait no cancellation ends: until the test opens the gate (or, should the
                // deadline wait for the work, 30 s).
                await offThePool { _ = gate.wait(timeout: .now() + 30) }
                ended.set(true)
                return 1
            }
            Issue.record("the work's result came before the deadline")
        } catch let exceeded as RequestDeadline.Exceeded {
            #expect(!ended.get(), "the deadline waited for the work to end")
            #expect(exceeded.description == "timed out: no complete answer within 0.3 s")
        }
    }

    @Test("the caller's cancellation reaches the work, and the caller gets CancellationError")
    func callerCancellationReachesTheWork() async throws {
        let (cancelled, signal) = AsyncStream<Void>.makeStream()
        let caller = Task {
            try await RequestDeadline(seconds: 600).run { () async throws -> Int in
                defer { signal.finish() }
                do {
                    try await Task.sleep(nanoseconds: 120_000_000_000)
                } catch {
                    signal.yield()
                    throw error
                }
                return 1
            }
        }
        caller.cancel()
        await #expect(throws: CancellationError.self) { _ = try await caller.value }
        // The stream ends when the work does: with one element if its sleep was cancelled.
        var reached = false
        for await _ in cancelled { reached = true }
        #expect(reached, "the work slept its 120 s: the caller's cancellation did not reach it")
    }
}
