import Foundation
import SQLKit
import Testing

@testable import CofferServer

/// A device row's `last_at` in `report_devices`: the latest time any of its events names.
@Suite("Report rows keep their latest time")
struct ReportLastSeenTests {
    @Test("an event flushed later with an earlier time does not move a device's last report back (SQLite)")
    func sqlite() async throws { try await Self.lastSeen(.sqlite) }

    @Test("an event flushed later with an earlier time does not move a device's last report back (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.lastSeen(.postgres) }

    static func lastSeen(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres, adjust: RolloutTests.fast)
        defer { Task { try? await server.stop() } }
        try await server.app.asyncBoot()  // starts the periodic flush
        let fleet = Fleet(try await Flowers.make(server), size: 1)
        let spring = try await fleet.deployment("spring")
        #expect(try await fleet.flowers.activate(spring).status == 200)
        let manifest = try #require(try await fleet.manifests()["device-0"])
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        #expect(try await fleet.report([Fleet.event(manifest, device: "device-0", outcome: "loaded", at: now)]).status == 200)
        #expect(try await Self.lastAt(server, equals: now))
        // A late event (sent days after it happened), flushed after the first.
        #expect(try await fleet.report([Fleet.event(manifest, device: "device-0", outcome: "opened", at: now.addingTimeInterval(-2 * 86_400))])
            .status == 200)
        let merged = try await fleet.waitForStatus(spring) { ($0["outcomes"] as? [String: Int])?["opened"] == 1 }
        #expect((merged["outcomes"] as? [String: Int])?["opened"] == 1, "\(merged)")
        #expect(try await Self.lastAt(server, equals: now))
    }

    /// Whether the device's row says `expected` as its last report, waiting up to 10 s for a flush.
    private static func lastAt(_ server: TestServer, equals expected: Date) async throws -> Bool {
        let sql = try #require(server.app.db as? any SQLDatabase)
        let deadline = Date().addingTimeInterval(10)
        var seen: Date?
        repeat {
            if let row = try await sql.raw("SELECT last_at FROM report_devices WHERE device_id = 'device-0' AND model = 'FlowerClassifier'").first() {
                seen = try row.decode(column: "last_at", as: Date.self)
                if let seen, abs(seen.timeIntervalSince(expected)) < 0.001 { return true }
            }
            try await Task.sleep(for: .milliseconds(100))
        } while Date() < deadline
        Issue.record("last_at is \(seen.map { "\($0)" } ?? "not there"), not \(expected)")
        return false
    }
}
