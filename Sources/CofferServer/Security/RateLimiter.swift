import Foundation
import NIOConcurrencyHelpers

/// Windows (one minute by default) of allowed events per key (an address, an app ID, a device ID),
/// in memory. Each key's window starts at its first counted event, so "N per minute" means N from
/// that event on, wherever it falls on the clock.
///
/// Nothing under the lock walks the keys. Keys live in two generations, each one window long: a key
/// seen in the current generation is looked up there, one last seen in the previous generation is
/// carried over when it is seen again, and when a generation ends the one before it is dropped whole
/// (released on another thread, its successor given room for as many keys). A dropped key was last
/// counted more than a window ago, so its window had ended anyway. Before, expired windows were swept
/// by copying the whole table under the lock, once a second when it held more than 100 000 keys: with
/// one device per request (as under load) that copied every key every second and stalled every
/// request behind it.
///
/// With several server instances each enforces its own limit; the effective limit is then the
/// per-instance limit times the number of instances behind the load balancer.
final class RateLimiter: Sendable {
    /// One key's window: when it started (seconds since 1970) and what it has counted.
    private struct Entry {
        var start: Double
        var count: Int
    }

    private struct Generations {
        /// Which generation is current: seconds since 1970 divided by the window's length.
        var index: Int64 = .min
        var current: [String: Entry] = [:]
        var previous: [String: Entry] = [:]
    }

    private let limit: Int
    private let window: TimeInterval
    private let state = NIOLockedValueBox(Generations())

    init(perMinute limit: Int, window: TimeInterval = 60) {
        self.limit = limit
        self.window = window
    }

    /// The seconds to wait when `key` has used its budget, without counting an event; nil if it has not.
    /// For limits on failures: look before the attempt, count (``acquire(_:cost:now:)``) only when it fails.
    func exhausted(_ key: String, now: Date = Date()) -> Int? {
        let time = now.timeIntervalSince1970
        return state.withLockedValue { state in
            guard let entry = state.current[key] ?? state.previous[key], time - entry.start < window,
                entry.count >= limit
            else { return nil }
            return wait(time, entry)
        }
    }

    /// Counts `cost` events (one by default) for `key`; returns nil if allowed, or the seconds to
    /// wait (and counts nothing) when they would take `key` past its budget.
    func acquire(_ key: String, cost: Int = 1, now: Date = Date()) -> Int? {
        let time = now.timeIntervalSince1970
        let index = Int64((time / window).rounded(.down))
        var retired: [[String: Entry]] = []
        let answer: Int? = state.withLockedValue { state in
            if state.index != index { retired = Self.advance(&state, to: index) }
            var entry = state.current[key] ?? state.previous[key] ?? Entry(start: time, count: 0)
            if time - entry.start >= window || time < entry.start { entry = Entry(start: time, count: 0) }
            guard cost <= limit - entry.count else { return wait(time, entry) }
            entry.count += cost
            state.current[key] = entry
            return nil
        }
        // Freeing hundreds of thousands of keys takes milliseconds: not on this (event loop) thread.
        if retired.contains(where: { !$0.isEmpty }) {
            let released = retired
            retired = []
            DispatchQueue.global(qos: .utility).async { withExtendedLifetime(released) {} }
        }
        return answer
    }

    /// Makes generation `index` current; returns the tables dropped, for release off the lock.
    private static func advance(_ state: inout Generations, to index: Int64) -> [[String: Entry]] {
        let capacity = state.current.count
        let dropped: [[String: Entry]]
        if index == state.index &+ 1 {
            // The current generation becomes the previous one; the one before it ends.
            dropped = [state.previous]
            state.previous = state.current
        } else {
            // A generation or more passed without an event (or the clock went back): every window ended.
            dropped = [state.previous, state.current]
            state.previous = [:]
        }
        state.current = Dictionary(minimumCapacity: capacity)
        state.index = index
        return dropped
    }

    /// Whole seconds until `entry`'s window ends, at least 1.
    private func wait(_ time: Double, _ entry: Entry) -> Int {
        max(1, Int((entry.start + window - time).rounded(.up)))
    }
}
