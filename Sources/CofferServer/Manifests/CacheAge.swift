import Foundation

/// When a cached entry was last confirmed by the database, and whether a request is re-checking it
/// now: the stale-while-revalidate rule of the manifest endpoint's caches (apps and collections).
///
/// A re-check that fails (the database unreachable from this instance) leaves the entry in use for
/// the others, but only for ``maximumStaleness`` after the first re-check since its last
/// confirmation: past that, every request asks the database, and is answered with its error while
/// it stays unreachable. Otherwise an instance cut off from the database would go on serving (and
/// signing afresh) what it last saw for as long as the cut lasts — a staged rollout another
/// instance halted, an app revoked or unbound, a deployment replaced. Devices keep what they have
/// through such errors (the SDK serves its cache). Counted from that first re-check, not from the
/// confirmation: an entry nobody asked for in a while still serves the requests that arrive while
/// its first re-check runs, and does not send them all to the database.
struct CacheAge: Sendable {
    /// How long an entry being re-checked may still be used.
    static let refreshWindow: TimeInterval = 5
    /// How long after the first re-check that has not confirmed it an entry may still be used.
    static let maximumStaleness: TimeInterval = 60

    private(set) var checkedAt: Date
    private var refreshingSince: Date?
    /// The first re-check since ``checkedAt``; nil once confirmed.
    private var unconfirmedSince: Date?

    init(checkedAt: Date = Date()) { self.checkedAt = checkedAt }

    /// Whether the entry was confirmed within `limit`.
    func isFresh(now: Date, within limit: TimeInterval) -> Bool { now.timeIntervalSince(checkedAt) < limit }

    /// Whether the entry may serve a request now: fresh, or another request is re-checking it (for at
    /// most ``refreshWindow``, and only within ``maximumStaleness`` of the first re-check that has
    /// not confirmed it). Otherwise this caller becomes the one that re-checks, and gets false.
    mutating func admit(now: Date, within limit: TimeInterval) -> Bool {
        if isFresh(now: now, within: limit) { return true }
        if let since = refreshingSince, now.timeIntervalSince(since) < Self.refreshWindow,
           let first = unconfirmedSince, now.timeIntervalSince(first) < Self.maximumStaleness { return true }
        refreshingSince = now
        if unconfirmedSince == nil { unconfirmedSince = now }
        return false
    }

    /// The database confirmed the entry at `now` (a re-check that started earlier than one that
    /// confirmed it already does not move the confirmation back).
    mutating func confirm(at now: Date) {
        checkedAt = max(checkedAt, now)
        refreshingSince = nil
        unconfirmedSince = nil
    }
}
