import CofferFormat
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Named points of an update where the crash tests kill the process, and where the fault tests
/// make a write fail.
///
/// Debug builds only: when `COFFER_TEST_KILL_AT` is `NAME` or `NAME:N`, the process sends itself
/// SIGKILL the first (or N-th) time it reaches point `NAME` — exactly what a crash or the system
/// ending the app there does. When `COFFER_TEST_FAIL_AT` is `NAME` or `NAME:N`, the write at a
/// point reached with ``reach(_:writing:)`` fails with `ENOSPC` from the first (or N-th) time on —
/// what a full disk does (a folder made read-only would not stop the tests when they run as root).
/// Release builds compile this to nothing.
enum CrashPoint {
    /// The points, in the order an update reaches them.
    static let all = ["manifest-verified", "piece-written", "delta-planned", "chunks-copied", "blob-verified", "blob-committed",
                      "previous-written", "previous-committed", "state-written", "state-committed", "previous-promoted",
                      "old-removed"]

    /// The points of a fallback to the last known good (``LastKnownGood``), in order; it ends
    /// with `old-removed` too.
    static let fallback = ["fallback-recorded", "fallback-linked", "fallback-state-written", "fallback-state-committed",
                           "fallback-previous-removed"]

    /// The points where a write can be made to fail: each state file's (`STEP-written`, before
    /// its rename), and the report queue's after the server answered (`reports-removing`).
    static let writes = ["previous-written", "state-written", "fallback-state-written", "reports-removing"]

    #if DEBUG
    private static let target = point(named: "COFFER_TEST_KILL_AT")
    private static let fault = point(named: "COFFER_TEST_FAIL_AT")
    private static let counter = Counter()
    private static let faultCounter = Counter()

    /// `NAME` or `NAME:N` from the environment variable `variable`.
    private static func point(named variable: String) -> (name: String, count: Int)? {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else { return nil }
        let parts = value.split(separator: ":", maxSplits: 1)
        return (String(parts[0]), parts.count == 2 ? Int(parts[1]) ?? 1 : 1)
    }

    static func reach(_ name: String) {
        guard let target, target.name == name, counter.next() == target.count else { return }
        kill(getpid(), SIGKILL)
    }

    /// ``reach(_:)``, before the write of `path`; at the fault tests' point, that write fails.
    static func reach(_ name: String, writing path: String) throws(IOFailure) {
        reach(name)
        guard let fault, fault.name == name, faultCounter.next() >= fault.count else { return }
        throw IOFailure(operation: .write, path: path, errno: ENOSPC)
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func next() -> Int { lock.withLock { count += 1; return count } }
    }
    #else
    @inline(__always) static func reach(_ name: String) {}
    @inline(__always) static func reach(_ name: String, writing path: String) throws(IOFailure) {}
    #endif
}
