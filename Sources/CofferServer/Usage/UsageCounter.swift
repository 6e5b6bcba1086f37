import Foundation
import NIOConcurrencyHelpers

/// Counts downloads and key deliveries per day in memory; ``flush(on:)`` adds them to the
/// `usage_daily` table in one statement. The request paths only take a lock and add one
/// (``count(_:_:)``): no database write per request.
///
/// Counts not yet flushed are lost if the process dies without shutting down (at most one
/// flush interval's worth); the server flushes it periodically and at shutdown (``PeriodicWork``).
final class UsageCounter: Sendable {
    /// One counted thing on one day.
    struct Key: Hashable, Sendable {
        let day: UsageDay
        let kind: UsageKind
        /// A blob address for downloads, a key ID for deliveries.
        let subject: String
    }

    private let pending = NIOLockedValueBox<[Key: Int64]>([:])

    init() {}

    /// Adds one `kind` for `subject` today (UTC).
    func count(_ kind: UsageKind, _ subject: String) {
        let key = Key(day: UsageDay(), kind: kind, subject: subject)
        pending.withLockedValue { $0[key, default: 0] += 1 }
    }

    /// Counts a blob answer if it is a download (see ``UsageKind/download``): the whole blob or
    /// a range from byte 0.
    func countDownload(_ address: String, from offset: Int64) {
        if offset == 0 { count(.download, address) }
    }

    /// Takes every pending count, leaving none.
    func take() -> [Key: Int64] {
        pending.withLockedValue { counts in
            defer { counts = [:] }
            return counts
        }
    }

    /// Puts counts back (after a failed flush), adding to what arrived since.
    func restore(_ counts: [Key: Int64]) {
        pending.withLockedValue { pending in
            for (key, value) in counts { pending[key, default: 0] += value }
        }
    }

    /// The counts not yet flushed (for tests and the activity page).
    var pendingCount: Int64 { pending.withLockedValue { $0.values.reduce(0, +) } }
}
