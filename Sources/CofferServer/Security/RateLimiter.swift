import Foundation
import NIOConcurrencyHelpers

/// Fixed windows (one minute by default) of allowed events per key (an address, an app ID, a
/// device ID), in memory. Windows are aligned to the clock: every key's budget starts afresh when
/// the window changes.
///
/// Nothing under the lock walks the keys: a new window replaces the previous window's counts in one
/// step, with room reserved for as many keys as the previous window had (so the table does not
/// grow and rehash under load), and the previous counts are released on another thread. Before,
/// each key had a window of its own and expired ones were swept by copying the whole table under the
/// lock, once a second when there were more than 100 000 keys: with one device per request (as under
/// load) that copied every key every second and stalled every request behind it.
///
/// With several server instances each enforces its own limit; the effective limit is then the
/// per-instance limit times the number of instances behind the load balancer.
final class RateLimiter: Sendable {
    private struct Window {
        /// Which window: seconds since 1970 divided by the window's length.
        var index: Int64 = .min
        var counts: [String: Int] = [:]
    }

    private let limit: Int
    private let window: TimeInterval
    private let state = NIOLockedValueBox(Window())

    init(perMinute limit: Int, window: TimeInterval = 60) {
        self.limit = limit
        self.window = window
    }

    /// The seconds to wait when `key` has used its budget, without counting an event; nil if it has not.
    /// For limits on failures: look before the attempt, count (``acquire(_:cost:now:)``) only when it fails.
    func exhausted(_ key: String, now: Date = Date()) -> Int? {
        let index = windowIndex(now)
        return state.withLockedValue { state in
            guard state.index == index, let count = state.counts[key], count >= limit else { return nil }
            return wait(now, index: index)
        }
    }

    /// Counts `cost` events (one by default) for `key`; returns nil if allowed, or the seconds to
    /// wait (and counts nothing) when they would take `key` past its budget.
    func acquire(_ key: String, cost: Int = 1, now: Date = Date()) -> Int? {
        let index = windowIndex(now)
        var retired: [String: Int] = [:]
        let answer: Int? = state.withLockedValue { state in
            if state.index != index {
                let capacity = state.counts.count
                retired = state.counts
                state.counts = Dictionary(minimumCapacity: capacity)
                state.index = index
            }
            let count = state.counts[key] ?? 0
            guard cost <= limit - count else { return wait(now, index: index) }
            state.counts[key] = count + cost
            return nil
        }
        // Freeing hundreds of thousands of keys takes milliseconds: not on this (event loop) thread.
        if !retired.isEmpty {
            let released = retired
            retired = [:]
            DispatchQueue.global(qos: .utility).async { withExtendedLifetime(released) {} }
        }
        return answer
    }

    private func windowIndex(_ now: Date) -> Int64 {
        Int64((now.timeIntervalSince1970 / window).rounded(.down))
    }

    /// Whole seconds until window `index` ends, at least 1.
    private func wait(_ now: Date, index: Int64) -> Int {
        let end = Double(index + 1) * window
        return max(1, Int((end - now.timeIntervalSince1970).rounded(.up)))
    }
}
