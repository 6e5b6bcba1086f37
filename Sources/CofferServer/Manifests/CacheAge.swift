import Foundation

/// When a cached entry was last confirmed by the database, and whether a request is re-checking it
/// now: the stale-while-revalidate rule of the manifest endpoint's caches (apps and collections).
struct CacheAge: Sendable {
    /// How long an entry being re-checked may still be used.
    static let refreshWindow: TimeInterval = 5

    private(set) var checkedAt: Date
    private var refreshingSince: Date?

    init(checkedAt: Date = Date()) { self.checkedAt = checkedAt }

    /// Whether the entry was confirmed within `limit`.
    func isFresh(now: Date, within limit: TimeInterval) -> Bool { now.timeIntervalSince(checkedAt) < limit }

    /// Whether the entry may serve a request now: fresh, or another request is re-checking it (for at
    /// most ``refreshWindow``). Otherwise this caller becomes the one that re-checks, and gets false.
    mutating func admit(now: Date, within limit: TimeInterval) -> Bool {
        if isFresh(now: now, within: limit) { return true }
        if let since = refreshingSince, now.timeIntervalSince(since) < Self.refreshWindow { return true }
        refreshingSince = now
        return false
    }

    /// The database confirmed the entry at `now`.
    mutating func confirm(at now: Date) {
        checkedAt = now
        refreshingSince = nil
    }
}
