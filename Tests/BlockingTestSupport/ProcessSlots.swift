import Foundation

/// At most as many child processes (the `coffer` binary, a shell, Python) at a time as the machine
/// has cores, for the whole test process.
///
/// The tests' tasks wait for their children without holding a thread (``offThePool(_:)``), so
/// nothing stops every test that runs one from starting it at once: on two cores, dozens of
/// children and the in-process servers then share the CPU so thinly that a request waits out its
/// database pool's 10-second timeout, or a sign-in limit's minute passes between two attempts.
/// A child waits here for a slot first; the waiting holds no thread either.
public actor ProcessSlots {
    /// The slots every test shares.
    public static let shared = ProcessSlots(width: max(2, ProcessInfo.processInfo.activeProcessorCount))

    private let width: Int
    private var inUse = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(width: Int) {
        self.width = width
    }

    /// Runs `work` (which starts a child and waits for it) on a thread of its own once a slot is free.
    public func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        await acquire()
        defer { release() }
        return try await offThePool(work)
    }

    private func acquire() async {
        if inUse < width {
            inUse += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            inUse -= 1
        } else {
            waiting.removeFirst().resume()  // the slot passes straight to the next child
        }
    }
}
