import Foundation

/// When a cached entry was last confirmed by the database, and whether a request is re-checking it
/// now: the stale-while-revalidate rule of the manifest endpoint's caches (apps and collections).
///
/// A re-check that fails (the database unreachable from this instance) leaves the entry in use for
/// the others, but never more than ``maximumStaleness`` past its freshness: past that, every request
/// asks the database, and is answered with its error while it stays unreachable. Otherwise an
/// instance cut off from the database would go on serving (and signing afresh) what it last saw for
/// as long as the cut lasts — a staged rollout another instance halted, an app revoked or unbound,
/// a deployment replaced. Devices keep what they have through such errors (the SDK serves its cache).
struct CacheAge: Sendable {
    /// How long an entry being re-checked may still be used.
    static let refreshWindow: TimeInterval = 5
    /// How long past its freshness an entry may still be used while its re-checks fail.
    static let maximumStaleness: TimeInterval = 60

    private(set) var checkedAt: Date
    private var refreshingSince: Date?

    init(checkedAt: Date = Date()) { self.checkedAt = checkedAt }

    /// Whether the entry was confirmed within `limit`.
    func isFresh(now: Date, within limit: TimeInterval) -> Bool { now.timeIntervalSince(checkedAt) < limit }

    /// Whether the entry may serve a request now: fresh, or another request is re-checking it (for at
    /// most ``refreshWindow``, and only within ``maximumStaleness`` past its freshness). Otherwise
    /// this caller becomes the one that re-checks, and gets false.
    mutating func admit(now: Date, within limit: TimeInterval) -> Bool {
        if isFresh(now: now, within: limit) { return true }
        if let since = refreshingSince, now.timeIntervalSince(since) < Self.refreshWindow,
           isFresh(now: now, within: limit + Self.maximumStaleness) { return true }
        refreshingSince = now
        return false
    }

    /// The database confirmed the entry at `now`.
    mutating func confirm(at now: Date) {
        checkedAt = now
        refreshingSince = nil
    }
}
