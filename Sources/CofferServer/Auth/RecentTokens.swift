import Foundation
import NIOConcurrencyHelpers

/// The hashes of API tokens that authenticated on this instance lately, so that a client address
/// past its budget of failed tokens (devices behind the same NAT sending wrong credentials, or
/// someone guessing) does not lock out a person whose token is known good: such a token is still
/// looked up — and its revocation still seen — while unknown ones get 429 before any query.
///
/// Only hashes are kept (never a token), for ``lifetime`` after their last use, at most
/// ``capacity`` of them: when full, the expired go first, then all.
final class RecentTokens: Sendable {
    /// How long a hash is remembered after its token's last success (10 minutes).
    let lifetime: TimeInterval
    /// The most hashes remembered.
    let capacity: Int
    private let seen = NIOLockedValueBox<[String: Date]>([:])

    init(lifetime: TimeInterval = 600, capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// Remembers that the token with `hash` authenticated at `now`.
    func succeeded(_ hash: String, now: Date = Date()) {
        seen.withLockedValue { seen in
            if seen[hash] == nil, seen.count >= capacity {
                seen = seen.filter { $0.value > now }
                if seen.count >= capacity { seen.removeAll() }
            }
            seen[hash] = now.addingTimeInterval(lifetime)
        }
    }

    /// Whether the token with `hash` authenticated within ``lifetime`` before `now`.
    func vouches(for hash: String, now: Date = Date()) -> Bool {
        seen.withLockedValue { ($0[hash] ?? .distantPast) > now }
    }

    /// Forgets `hash` (its token failed: revoked meanwhile).
    func forget(_ hash: String) {
        _ = seen.withLockedValue { $0.removeValue(forKey: hash) }
    }
}
