import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Named points of an update where the crash tests kill the process.
///
/// Debug builds only: when `COFFER_TEST_KILL_AT` is `NAME` or `NAME:N`, the process sends itself
/// SIGKILL the first (or N-th) time it reaches point `NAME` — exactly what a crash or the system
/// ending the app there does. Release builds compile this to nothing.
enum CrashPoint {
    /// The points, in the order an update reaches them.
    static let all = ["manifest-verified", "piece-written", "delta-planned", "chunks-copied", "blob-verified", "blob-committed",
                      "previous-written", "previous-committed", "state-written", "state-committed", "old-removed"]

    /// The points of a fallback to the last known good (``LastKnownGood``), in order; it ends
    /// with `old-removed` too.
    static let fallback = ["fallback-recorded", "fallback-linked", "fallback-state-written", "fallback-state-committed",
                           "fallback-previous-removed"]

    #if DEBUG
    private static let target: (name: String, count: Int)? = {
        guard let value = ProcessInfo.processInfo.environment["COFFER_TEST_KILL_AT"], !value.isEmpty else { return nil }
        let parts = value.split(separator: ":", maxSplits: 1)
        return (String(parts[0]), parts.count == 2 ? Int(parts[1]) ?? 1 : 1)
    }()
    private static let counter = Counter()

    static func reach(_ name: String) {
        guard let target, target.name == name, counter.next() == target.count else { return }
        kill(getpid(), SIGKILL)
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func next() -> Int { lock.withLock { count += 1; return count } }
    }
    #else
    @inline(__always) static func reach(_ name: String) {}
    #endif
}
