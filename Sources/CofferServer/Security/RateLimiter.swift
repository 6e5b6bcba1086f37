import Foundation

/// Fixed one-minute windows of allowed events per key (an app ID, a device ID), in memory.
///
/// With several server instances each enforces its own limit; the effective limit is then the
/// per-instance limit times the number of instances behind the load balancer.
final class RateLimiter: @unchecked Sendable {
    private let limit: Int
    private let window: TimeInterval
    private let lock = NSLock()
    private var counts: [String: (start: Date, count: Int)] = [:]
    /// When expired windows may next be swept out (``acquire(_:cost:now:)``).
    private var nextSweep = Date.distantPast

    /// Keys kept before expired windows are swept out (at most once a second).
    static let sweepAbove = 100_000

    init(perMinute limit: Int, window: TimeInterval = 60) {
        self.limit = limit
        self.window = window
    }

    /// The seconds to wait when `key` has used its budget, without counting an event; nil if it has not.
    /// For limits on failures: look before the attempt, count (``acquire(_:now:)``) only when it fails.
    func exhausted(_ key: String, now: Date = Date()) -> Int? {
        lock.withLock {
            guard let entry = counts[key], now.timeIntervalSince(entry.start) < window, entry.count >= limit else { return nil }
            return max(1, Int((window - now.timeIntervalSince(entry.start)).rounded(.up)))
        }
    }

    /// Counts `cost` events (one by default) for `key`; returns nil if allowed, or the seconds to
    /// wait (and counts nothing) when they would take `key` past its budget.
    func acquire(_ key: String, cost: Int = 1, now: Date = Date()) -> Int? {
        lock.withLock {
            // Swept at most once a second: with more live keys than sweepAbove (one device ID per
            // request, as under load), sweeping on every call made each call cost all the keys.
            if counts.count > Self.sweepAbove, now >= nextSweep {
                counts = counts.filter { now.timeIntervalSince($0.value.start) < window }
                nextSweep = now.addingTimeInterval(1)
            }
            var entry = counts[key] ?? (now, 0)
            if now.timeIntervalSince(entry.start) >= window { entry = (now, 0) }
            guard cost <= limit - entry.count else {
                return max(1, Int((window - now.timeIntervalSince(entry.start)).rounded(.up)))
            }
            entry.count += cost
            counts[key] = entry
            return nil
        }
    }
}
