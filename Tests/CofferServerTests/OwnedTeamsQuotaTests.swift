import CofferFormat
@testable import CofferServer
import Fluent
import Foundation
import Testing

/// The storage quota holds for each account across the teams it owns. It held per team only, and
/// any signed-in user may create teams: one account stored the quota once per team it made.
@Suite("The quota across the teams an account owns")
struct OwnedTeamsQuotaTests {
    static func run(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres) { $0.teamQuotaBytes = 10_000_000 }
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let world = flowers.world

        // The admin's first team stores 6 MB.
        let stored = try DashboardQuotaTests.model(flowers.key, size: 6_000_000, seed: 13)
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(stored.sha256Hex)", body: stored).status == 201)
        // A second team of the same account is made, empty, and refuses another 6 MB: the account's
        // teams together would store 12 MB of 10.
        try await world.team("T2")
        let second = try await world.key(in: "T2")
        let more = try DashboardQuotaTests.model(second, size: 6_000_000, seed: 29)
        let refused = try await world.admin.call("PUT", "/v1/teams/T2/blobs/\(more.sha256Hex)", body: more)
        #expect(refused.status == 413 && refused.errorCode == "quota_exceeded", "\(refused.text)")
        #expect(refused.text.contains("owns other teams too") && refused.text.contains("COFFER_TEAM_QUOTA_BYTES"), "\(refused.text)")
        // What fits beside the first team's 6 MB is taken: 3 MB in the second.
        let small = try DashboardQuotaTests.model(second, size: 3_000_000, seed: 37)
        #expect(try await world.admin.call("PUT", "/v1/teams/T2/blobs/\(small.sha256Hex)", body: small).status == 201)
        // The dashboard's upload of 2 MB to the first team would fit that team (8 MB of 10), not the
        // account's teams together (11 MB): refused before its body is read.
        let browser = try await DashboardTests.ownerBrowser(server)
        _ = try await browser.get(DashboardDeploymentTests.collection + "/deployments/new")
        let third = try DashboardQuotaTests.model(flowers.key, size: 2_000_000, seed: 31)
        let scripted = try await DashboardDeploymentTests.scriptUpload(browser, model: "FlowerClassifier", third)
        #expect(scripted.status == 413, "\(scripted.text)")
        #expect((scripted.object["reason"] as? String)?.contains("owns other teams too") == true, "\(scripted.text)")

        // Another account owns a team of its own: its quota is its own.
        let bob = try await world.member("bob", role: "viewer", in: "T2")
        #expect(try await bob.call("POST", "/v1/teams", json: ["name": "B"]).status == 201)
        let keyFile = try await bob.call("POST", "/v1/teams/B/keys", json: ["name": "k"])
        let bobsKey = try ModelKey(fileRepresentation: keyFile.body)
        let bobs = try DashboardQuotaTests.model(bobsKey, size: 6_000_000, seed: 41)
        let taken = try await bob.call("PUT", "/v1/teams/B/blobs/\(bobs.sha256Hex)", body: bobs)
        #expect(taken.status == 201, "\(taken.text)")
        #expect(try await UploadLeaseRecord.query(on: server.app.db).count() == 0)
    }

    @Test("an account's second team cannot store what its first leaves of the quota, by the API or the dashboard; another account's team has its own (SQLite)")
    func sqlite() async throws { try await Self.run(.sqlite) }

    @Test("the same on PostgreSQL", .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.run(.postgres) }
}
