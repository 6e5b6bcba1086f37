import Foundation
import Testing

/// Runs each test of a suite (or one test) on a thread of its own instead of Swift's cooperative
/// pool: for tests that compute for seconds without a suspension point (fuzzing, sealing tens of
/// MiB, fifty thousand random queries).
///
/// `swift test` starts every test at once as a task on the cooperative pool, which has one thread
/// per core: two in CI. Such tests held both threads for the first 90 s of the run; every other
/// test waited that long at its next `await`, and deadlines counted in wall time ran out unchecked
/// (fifteen servers that listened within a second were reported "not healthy"). On a thread of its
/// own a test still uses the CPU, but shares it with the rest as the kernel schedules threads, and
/// the pool keeps running every other test.
///
/// The test keeps its task (and so its task-local values: the issues it records are its own); only
/// the executor its synchronous stretches run on changes (`withTaskExecutorPreference`).
public struct OwnThreadTrait: TestTrait, SuiteTrait, TestScoping {
    /// Whether the calling code runs on a thread this trait started.
    public static var isCurrentThreadOwn: Bool {
        Thread.current.threadDictionary[marker] as? Bool == true
    }

    static let marker = "coffer.test-own-thread"

    /// Applied to every test of a suite it is given to.
    public var isRecursive: Bool { true }

    /// A thread for each test case; a suite itself needs none.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    /// Runs the test case with a task executor of one thread, ended once the test case ends.
    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        let executor = OneThreadExecutor()
        defer { executor.finish() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Runs each test case on a thread of its own, off the cooperative pool (``OwnThreadTrait``).
    public static var ownThread: Self { Self() }
}

/// A task executor with one thread that runs the jobs enqueued on it in order. The thread ends
/// once ``finish()`` has been called and no job is left; a job enqueued after that starts a new one.
final class OneThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var running = false
    private var finished = false

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        let start = !running
        running = true
        condition.signal()
        condition.unlock()
        if start {
            Thread { [self] in
                Thread.current.threadDictionary[OwnThreadTrait.marker] = true
                runJobs()
            }.start()
        }
    }

    /// Lets the thread end once its queue is empty.
    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            while jobs.isEmpty, !finished { condition.wait() }
            guard !jobs.isEmpty else {
                running = false
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
