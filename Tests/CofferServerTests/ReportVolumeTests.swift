import Foundation
import SQLKit
import Testing

@testable import CofferServer

/// What one app's reports may add to the database per hour (``ReportVolumeBudget``): device IDs are
/// the app's choice, so one extracted credential could otherwise add rows without end.
@Suite("Report volume per app and hour")
struct ReportVolumeTests {
    @Test("new device rows and stored failures are budgeted per app and hour; seen devices and other apps pass (SQLite)")
    func sqlite() async throws { try await Self.budgets(.sqlite) }

    @Test("new device rows and stored failures are budgeted per app and hour; seen devices and other apps pass (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.budgets(.postgres) }

    static func budgets(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres) { configuration in
            RolloutTests.fast(&configuration)
            configuration.reportDevicesPerAppPerHour = 30
            configuration.reportFailuresPerAppPerHour = 5
        }
        defer { Task { try? await server.stop() } }
        try await server.app.asyncBoot()
        let fleet = Fleet(try await Flowers.make(server), size: 1)
        let spring = try await fleet.deployment("spring")
        #expect(try await fleet.flowers.activate(spring).status == 200)
        let manifest = try #require(try await fleet.manifests()["device-0"])
        func events(_ devices: Range<Int>, outcome: String = "failed") -> [[String: Any]] {
            devices.map { Fleet.event(manifest, device: "invented-\($0)", outcome: outcome, reason: outcome == "failed" ? "boom" : nil) }
        }

        // 20 new devices, all failing: taken.
        let first = try await fleet.report(events(0..<20))
        #expect(first.status == 200 && first.object["accepted"] as? Int == 20, "\(first.text)")
        // 20 more would make 40 new rows this hour (budget 30): refused whole, nothing counted.
        let flood = try await fleet.report(events(20..<40))
        #expect(flood.status == 429 && flood.errorCode == "rate_limited", "\(flood.text)")
        let wait = try #require(flood.header("Retry-After").flatMap(Int.init))
        #expect(wait >= 1 && wait <= 3600)
        #expect(flood.text.contains("too many new devices"))
        // Devices already counted this hour keep reporting; new ones fill the budget exactly.
        #expect(try await fleet.report(events(0..<10, outcome: "loaded")).status == 200)
        #expect(try await fleet.report(events(20..<30, outcome: "loaded")).status == 200)
        #expect(try await fleet.report(events(30..<31, outcome: "loaded")).status == 429)
        // Another app of the team has a budget of its own.
        let other = try await fleet.flowers.world.app(in: "T", name: "Other")
        try await fleet.flowers.world.bind(other.id, in: "T", to: ["FlowerModels"])
        #expect(try await fleet.report([Fleet.event(manifest, device: "other-0", outcome: "loaded")], app: other).status == 200)

        // 31 devices counted; every failure counts on its device, but 5 reasons were stored.
        let status = try await fleet.waitForStatus(spring) { $0["devices"] as? Int == 31 }
        #expect(status["devices"] as? Int == 31, "\(status)")
        #expect((status["outcomes"] as? [String: Int])?["failed"] == 20, "\(status)")
        let sql = try #require(server.app.db as? any SQLDatabase)
        struct Count: Decodable { let n: Int }
        let stored = try await sql.raw("SELECT COUNT(*) AS n FROM report_events").first(decoding: Count.self)
        #expect(stored?.n == 5)
        let rows = try await sql.raw("SELECT COUNT(*) AS n FROM report_devices").first(decoding: Count.self)
        #expect(rows?.n == 31)
    }

    @Test("a new hour starts both budgets afresh; a batch naming one device twice counts it once")
    func hours() {
        let budget = ReportVolumeBudget(deviceRows: 2, failures: 1)
        let app = UUID()
        let hour = Date(timeIntervalSince1970: 1_800_000_000 - 1_800_000_000.truncatingRemainder(dividingBy: 3600))
        let twice = [ReportBufferTests.report("a", device: "d1"), ReportBufferTests.report("b", device: "d1"),
                     ReportBufferTests.report("c", device: "d2")]
        #expect(budget.admitRows(twice, appID: app, now: hour) == nil)
        #expect(budget.admitRows([ReportBufferTests.report("d", device: "d3")], appID: app, now: hour.addingTimeInterval(600)) == 3000)
        #expect(budget.admitRows([ReportBufferTests.report("e", device: "d2")], appID: app, now: hour.addingTimeInterval(600)) == nil)
        #expect(budget.admitRows([ReportBufferTests.report("f", device: "d3")], appID: UUID(), now: hour) == nil)
        #expect(budget.admitRows([ReportBufferTests.report("g", device: "d3")], appID: app, now: hour.addingTimeInterval(3600)) == nil)
        #expect(budget.storableFailures(3, appID: app, now: hour) == 1)
        #expect(budget.storableFailures(1, appID: app, now: hour.addingTimeInterval(10)) == 0)
        #expect(budget.storableFailures(0, appID: app, now: hour) == 0)
        #expect(budget.storableFailures(2, appID: app, now: hour.addingTimeInterval(3600)) == 1)
    }
}
