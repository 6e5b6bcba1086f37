import Fluent
import Foundation
import NIOConcurrencyHelpers

/// Checks a device's app ID and credential, from a short-lived cache of the app's row so a busy
/// manifest endpoint does not read the database per request. A credential that does not match
/// the cached row is checked against the database before it is refused (it may be new), so a
/// rotation takes effect at once; a revocation or a change of the app's collections at once on the
/// instance that made it (``forget(_:)``) and within `freshness` on the others.
final class AppCredentials: Sendable {
    /// What the cache keeps of an app.
    struct App: Sendable {
        let id: UUID
        let teamID: UUID
        let credentialHash: String
        let previousCredentialHash: String?
        let revoked: Bool
        /// The identifiers of the collections the app is bound to.
        let collections: Set<String>
        /// The app's attestation policy.
        let attestation: AttestationSettings
        var age: CacheAge

        /// Whether the app is bound to the collection `identifier`, byte for byte: a `Set` of
        /// Strings also finds canonically equivalent spellings ("\u{212A}" for "K"), which the
        /// database would store and count apart.
        func isBound(to identifier: String) -> Bool {
            guard let found = collections.firstIndex(of: identifier) else { return false }
            return collections[found].hasSameBytes(as: identifier)
        }
    }

    /// How a presented credential compares with the app's row.
    enum Verdict: Sendable {
        /// The app's current credential, and the app is not revoked.
        case valid(App)
        /// No such app, or a credential it never had.
        case unknown
        /// The credential a rotation replaced.
        case rotatedAway(App)
        /// The current credential of a revoked app.
        case revoked(App)
    }

    let freshness: TimeInterval
    /// Wrong credentials per client address: the budget failed API tokens spend too
    /// (`COFFER_AUTH_FAILURES_PER_ADDRESS_PER_MINUTE`).
    let failures: RateLimiter
    private let cache = NIOLockedValueBox<[UUID: App]>([:])

    init(failures: RateLimiter, freshness: TimeInterval = 1) {
        self.failures = failures
        self.freshness = freshness
    }

    /// The app's team from the cache alone when its row is fresh, the credential matches it and the
    /// app is bound to `collection`; nil sends the caller to ``authenticate(appID:credential:address:on:)``.
    /// No database, no task.
    ///
    /// When the row is older than `freshness`, one request goes to the database to refresh it while
    /// the others keep using the cached row (``CacheAge``), so a busy endpoint sends
    /// one query per app per `freshness`, not a burst of them.
    func cachedTeam(appID: UUID, credential: String, collection: String) -> UUID? {
        guard let app = cachedApp(appID: appID, credential: credential), app.isBound(to: collection) else { return nil }
        return app.teamID
    }

    /// The app from the cache alone when its row is fresh, it is not revoked and the credential
    /// matches; nil sends the caller to ``check(appID:credential:address:on:)``. No database, no task.
    ///
    /// Only a request whose credential matches the row may be the one picked to refresh a stale
    /// row: a wrong credential picked for it would be refused (429, past its address's failure
    /// budget) before it reached the database, and the stale row — say, of an app revoked or
    /// unbound on another instance — would go on serving everyone for another ``CacheAge/refreshWindow``,
    /// again and again while someone keeps sending wrong credentials.
    func cachedApp(appID: UUID, credential: String) -> App? {
        guard let seen = cache.withLockedValue({ $0[appID] }), !seen.revoked, Secrets.matches(credential, hash: seen.credentialHash)
        else { return nil }
        let now = Date()
        return cache.withLockedValue { cache in
            // The row may have been replaced in between: admit only the one the credential matched.
            guard let current = cache[appID], current.credentialHash == seen.credentialHash, !current.revoked,
                  cache[appID]?.age.admit(now: now, within: freshness) == true
            else { return nil }
            return cache[appID]
        }
    }

    /// The app when its cached row, however old, is not revoked and `credential` matches it; nil
    /// otherwise. No database: enough to let a device through a budget, never to authenticate it.
    func knownApp(appID: UUID, credential: String) -> App? {
        guard let app = cache.withLockedValue({ $0[appID] }), !app.revoked,
              Secrets.matches(credential, hash: app.credentialHash) else { return nil }
        return app
    }

    /// Compares a credential with the app's row (from the cache when it is fresh and matches, else
    /// from the database). Comparisons are constant time.
    ///
    /// An unknown app or a wrong credential costs `address` one failure of ``failures`` (a
    /// rotated-away one does not: old installs behind one carrier NAT would use up a budget every
    /// app there shares; a fresh cached row answers it without the database); an address
    /// past its budget gets 429 before any look-up unless the cache vouches for the credential, so a
    /// flood of wrong credentials costs no database query on any route (a right one behind the same
    /// address still works).
    func check(appID: UUID, credential: String, address: String, on db: any Database) async throws -> Verdict {
        let failureKey = "address:" + AddressBudget.key(address)
        if let wait = failures.exhausted(failureKey), knownApp(appID: appID, credential: credential) == nil {
            throw TokenAuthenticator.tooMany(wait)
        }
        // A fresh row decides for its current and its rotated-away credential; anything else (no
        // row, an old one, a credential it does not know) asks the database.
        var verdict = Verdict.unknown
        if let cached = cache.withLockedValue({ $0[appID] }), cached.age.isFresh(now: Date(), within: freshness) {
            verdict = Self.verdict(of: cached, for: credential)
        }
        if case .unknown = verdict {
            verdict = Self.verdict(of: try await load(appID, on: db), for: credential)
        }
        if case .unknown = verdict { _ = failures.acquire(failureKey) }
        return verdict
    }

    /// What `app`'s row says of `credential` (constant-time comparisons).
    private static func verdict(of app: App?, for credential: String) -> Verdict {
        guard let app else { return .unknown }
        if Secrets.matches(credential, hash: app.credentialHash) { return app.revoked ? .revoked(app) : .valid(app) }
        if let previous = app.previousCredentialHash, Secrets.matches(credential, hash: previous) { return .rotatedAway(app) }
        return .unknown
    }

    /// The app; throws 401 for an unknown app or wrong credential, 403 for a rotated-away
    /// credential or a revoked app; 429 past the address's budget of failures (``check(appID:credential:address:on:)``).
    func authenticate(appID: UUID, credential: String, address: String, on db: any Database) async throws -> App {
        switch try await check(appID: appID, credential: credential, address: address, on: db) {
        case .valid(let app): return app
        case .unknown: throw AppCredentials.invalid
        case .rotatedAway: throw AppCredentials.rotatedAway
        case .revoked: throw AppCredentials.appRevoked
        }
    }

    /// 401 for an unknown app or a wrong credential: one answer for both.
    static let invalid = APIError(.unauthorized, "invalid_credential", "unknown app or wrong credential")
    /// 403 for the credential a rotation replaced.
    static let rotatedAway = APIError.forbidden("credential_revoked", "this app credential was rotated; use the current one")
    /// 403 for a revoked app.
    static let appRevoked = APIError.forbidden("app_revoked", "this app is revoked")

    /// Drops an app's cached row (after a revocation, rotation or change of collections on this instance).
    func forget(_ appID: UUID) {
        _ = cache.withLockedValue { $0.removeValue(forKey: appID) }
    }

    private func load(_ appID: UUID, on db: any Database) async throws -> App? {
        guard let row = try await AppRecord.find(appID, on: db) else {
            cache.withLockedValue { $0[appID] = nil }
            return nil
        }
        let collections = try await AppCollections.identifiers(of: appID, on: db)
        let app = App(id: appID, teamID: row.$team.id, credentialHash: row.credentialHash, previousCredentialHash: row.previousCredentialHash,
                      revoked: row.revokedAt != nil, collections: Set(collections),
                      attestation: try AttestationSettings.stored(row.attestation), age: CacheAge())
        cache.withLockedValue { cache in
            if cache.count > 100_000 { cache.removeAll() }
            cache[appID] = app
        }
        return app
    }
}
