import Fluent
import Foundation
import NIOConcurrencyHelpers

/// Checks a device's app ID and credential, from a short-lived cache of the app's row so a busy
/// manifest endpoint does not read the database per request. A credential that does not match
/// the cached row is checked against the database before it is refused (it may be new), so a
/// rotation takes effect at once; a revocation at once on the instance that made it (``forget(_:)``)
/// and within `freshness` on the others.
final class AppCredentials: Sendable {
    struct App: Sendable {
        let teamID: UUID
        let credentialHash: String
        let previousCredentialHash: String?
        let revoked: Bool
        var age: CacheAge
    }

    let freshness: TimeInterval
    private let cache = NIOLockedValueBox<[UUID: App]>([:])

    init(freshness: TimeInterval = 1) { self.freshness = freshness }

    /// The app's team from the cache alone when its row is fresh and the credential matches it; nil
    /// sends the caller to ``authenticate(appID:credential:on:)``. No database, no task.
    ///
    /// When the row is older than `freshness`, one request goes to the database to refresh it while
    /// the others keep using the cached row (``CacheAge``), so a busy endpoint sends
    /// one query per app per `freshness`, not a burst of them.
    func cachedTeam(appID: UUID, credential: String) -> UUID? {
        let now = Date()
        let app: App? = cache.withLockedValue { cache in
            cache[appID]?.age.admit(now: now, within: freshness) == true ? cache[appID] : nil
        }
        guard let app, !app.revoked, Secrets.matches(credential, hash: app.credentialHash) else { return nil }
        return app.teamID
    }

    /// The app's team; throws 401 for an unknown app or wrong credential, 403 for a rotated-away
    /// credential or a revoked app. Comparisons are constant time.
    func authenticate(appID: UUID, credential: String, on db: any Database) async throws -> UUID {
        var app = cache.withLockedValue { $0[appID] }
        if app == nil || !app!.age.isFresh(now: Date(), within: freshness) || !Secrets.matches(credential, hash: app!.credentialHash) {
            app = try await load(appID, on: db)
        }
        guard let app else { throw APIError(.unauthorized, "invalid_credential", "unknown app or wrong credential") }
        if !Secrets.matches(credential, hash: app.credentialHash) {
            if let previous = app.previousCredentialHash, Secrets.matches(credential, hash: previous) {
                throw APIError.forbidden("credential_revoked", "this app credential was rotated; use the current one")
            }
            throw APIError(.unauthorized, "invalid_credential", "unknown app or wrong credential")
        }
        guard !app.revoked else { throw APIError.forbidden("app_revoked", "this app is revoked") }
        return app.teamID
    }

    /// Drops an app's cached row (after a revocation or rotation on this instance).
    func forget(_ appID: UUID) {
        _ = cache.withLockedValue { $0.removeValue(forKey: appID) }
    }

    private func load(_ appID: UUID, on db: any Database) async throws -> App? {
        guard let row = try await AppRecord.find(appID, on: db) else {
            cache.withLockedValue { $0[appID] = nil }
            return nil
        }
        let app = App(teamID: row.$team.id, credentialHash: row.credentialHash, previousCredentialHash: row.previousCredentialHash,
                      revoked: row.revokedAt != nil, age: CacheAge())
        cache.withLockedValue { cache in
            if cache.count > 100_000 { cache.removeAll() }
            cache[appID] = app
        }
        return app
    }
}
