@testable import CofferServer
import Foundation
import Testing

/// The cached app rows that let manifests and reports through without the database: a stale row is
/// refreshed by a request whose credential matches it, so nobody can keep a stale row in use.
@Suite("App credential cache")
struct AppCredentialCacheTests {
    @Test("wrong credentials past their address's budget cannot keep the stale cached row of a revoked app in use")
    func wrongCredentialsDoNotPinAStaleRow() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let app = try await world.app(in: "T")
        let appID = try #require(UUID(uuidString: app.id))
        // Another instance's cache: this one is not told of the revocation, it finds out by reading.
        let credentials = AppCredentials(failures: RateLimiter(perMinute: 1), freshness: 0.2)
        guard case .valid = try await credentials.check(appID: appID, credential: app.credential, address: "198.51.100.1", on: server.app.db)
        else { Issue.record("the app's credential is valid"); return }
        #expect(try await world.admin.call("DELETE", "/v1/teams/T/apps/\(app.id)").status == 204)
        // The attacker's address has spent its failure budget.
        _ = try await credentials.check(appID: UUID(), credential: "cfa_made_up", address: "203.0.113.1", on: server.app.db)

        var revokedSeen = false
        let start = Date()
        while Date().timeIntervalSince(start) < 2, !revokedSeen {
            try await Task.sleep(for: .milliseconds(250))  // the row goes stale (0.2 s)
            // A wrong credential from the attacker's address: answered 429 without the database.
            if credentials.cachedApp(appID: appID, credential: "cfa_wrong") == nil {
                await #expect(throws: (any Error).self) {
                    _ = try await credentials.check(appID: appID, credential: "cfa_wrong", address: "203.0.113.1", on: server.app.db)
                }
            }
            // The leaked credential, from elsewhere.
            if credentials.cachedApp(appID: appID, credential: app.credential) == nil,
               case .revoked = try await credentials.check(appID: appID, credential: app.credential, address: "192.0.2.9", on: server.app.db) {
                revokedSeen = true
            }
        }
        #expect(revokedSeen, "the revoked app's credential was still let through from the stale row after 2 s")
    }
}
