import ArgumentParser
import Dispatch

/// A command that talks to a server: it does its work in `run() async`.
///
/// The root command parses and runs synchronously, so this also supplies the synchronous
/// `run()` it calls: it runs the asynchronous one to completion on the concurrency pool and
/// waits for it. An `AdminFailure` is reported (one line, its exit code); other errors go back
/// to the root command, which reports them as the offline commands do.
protocol NetworkCommand: AsyncParsableCommand {}

extension NetworkCommand {
    mutating func run() throws {
        // The parsed command moves to the task; this thread only waits, so nothing is shared.
        let command = Handoff(self)
        let outcome = Outcome()
        Task.detached {
            var command = command.value
            do {
                try await command.run()
                outcome.finish(nil)
            } catch {
                outcome.finish(error)
            }
        }
        if let error = outcome.wait() {
            if let failure = error as? AdminFailure { failure.report() }
            throw error
        }
    }
}

/// A value handed to a task while the thread that had it waits for that task.
private struct Handoff<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The result of a detached task, handed to the thread waiting for it.
private final class Outcome: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var error: (any Error)?

    func finish(_ error: (any Error)?) {
        self.error = error
        done.signal()
    }

    func wait() -> (any Error)? {
        done.wait()
        return error
    }
}
