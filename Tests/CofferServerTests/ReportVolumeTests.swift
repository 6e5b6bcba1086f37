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
        // The bucket starts full each clock hour: not within two minutes of the next one.
        let left = 3600 - Date().timeIntervalSince1970.truncatingRemainder(dividingBy: 3600)
        if left < 120 { try await Task.sleep(for: .seconds(left + 1)) }
        let server = try await TestServer.start(postgres: backend.isPostgres) { configuration in
            RolloutTests.fast(&configuration)
            configuration.reportDevicesPerAppPerHour = 100
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

        // Failures: 3 stored; their retry (duplicates) stores none and spends none; 2 more fill the
        // budget of 5; the other 95 failing devices count without their reasons.
        let first = events(0..<3)
        #expect(try await fleet.report(first).object["accepted"] as? Int == 3)
        #expect(try await fleet.report(first).object["duplicates"] as? Int == 3)
        for range in [3..<5, 5..<24, 24..<43, 43..<62, 62..<81, 81..<100] {
            let reply = try await fleet.report(events(range))
            #expect(reply.status == 200 && reply.object["accepted"] as? Int == range.count, "\(reply.text)")
        }
        // 100 devices used the bucket of 100: 20 more are refused whole, until 20 have come back
        // (100 an hour: about 12 minutes).
        let flood = try await fleet.report(events(100..<120))
        #expect(flood.status == 429 && flood.errorCode == "rate_limited", "\(flood.text)")
        #expect(flood.text.contains("too many new devices"))
        let wait = try #require(flood.header("Retry-After").flatMap(Int.init))
        #expect(wait > 600 && wait <= 720, "\(wait)")
        // Devices already counted this hour keep reporting; one new device waits about 36 s.
        #expect(try await fleet.report(events(0..<20, outcome: "loaded")).status == 200)
        let one = try await fleet.report(events(120..<121, outcome: "loaded"))
        #expect(one.status == 429 && (one.header("Retry-After").flatMap(Int.init) ?? 0) <= 37, "\(one.text)")
        // Another app of the team has a bucket of its own.
        let other = try await fleet.flowers.world.app(in: "T", name: "Other")
        try await fleet.flowers.world.bind(other.id, in: "T", to: ["FlowerModels"])
        #expect(try await fleet.report([Fleet.event(manifest, device: "other-0", outcome: "loaded")], app: other).status == 200)

        // 101 devices counted; every failure counts on its device, but 5 reasons were stored.
        let status = try await fleet.waitForStatus(spring) { $0["devices"] as? Int == 101 }
        #expect(status["devices"] as? Int == 101, "\(status)")
        #expect((status["outcomes"] as? [String: Int])?["failed"] == 100, "\(status)")
        let sql = try #require(server.app.db as? any SQLDatabase)
        struct Count: Decodable { let n: Int }
        #expect(try await sql.raw("SELECT COUNT(*) AS n FROM report_events").first(decoding: Count.self)?.n == 5)
        #expect(try await sql.raw("SELECT COUNT(*) AS n FROM report_devices").first(decoding: Count.self)?.n == 101)
    }

    @Test("the bucket refills evenly; seen triples take no token; look-alike spellings are other devices; a new hour starts afresh")
    func bucket() {
        // 36 an hour: one token every 100 s.
        let budget = ReportVolumeBudget(deviceRows: 36, failures: 1)
        let app = UUID()
        let hour = Date(timeIntervalSince1970: 1_800_000_000)  // a clock hour's start
        func reports(_ devices: [String]) -> [DeviceReport] { devices.map { ReportBufferTests.report(UUID().uuidString, device: $0) } }
        #expect(budget.admitRows(reports(["d1", "d1", "d2"]), appID: app, now: hour) == nil)
        #expect(budget.admitRows(reports((0..<34).map { "x\($0)" }), appID: app, now: hour) == nil)
        #expect((89...91).contains(budget.admitRows(reports(["d3"]), appID: app, now: hour.addingTimeInterval(10)) ?? 0))
        #expect(budget.admitRows(reports(["d2", "x7"]), appID: app, now: hour.addingTimeInterval(10)) == nil)
        #expect(budget.admitRows(reports(["d3"]), appID: UUID(), now: hour.addingTimeInterval(10)) == nil)
        #expect(budget.admitRows(reports(["d3"]), appID: app, now: hour.addingTimeInterval(101)) == nil)
        #expect(budget.admitRows(reports(["d4"]), appID: app, now: hour.addingTimeInterval(101)) != nil)
        // A request that took its time in the last hour does not bring it back.
        #expect(budget.admitRows(reports(["d5"]), appID: app, now: hour.addingTimeInterval(3600)) == nil)
        #expect(budget.admitRows(reports(["d5"]), appID: app, now: hour.addingTimeInterval(3599)) == nil)

        // "é" and "e" + U+0301 are equal Strings but other bytes: the database keeps two rows.
        let lookAlike = UUID()
        #expect(budget.admitRows(reports((0..<35).map { "y\($0)" } + ["caf\u{E9}"]), appID: lookAlike, now: hour) == nil)
        #expect(budget.admitRows(reports(["cafe\u{301}"]), appID: lookAlike, now: hour) != nil)
        // Adjacent in one batch (where an event takes the hash of the one before): still two rows.
        let adjacent = UUID()
        #expect(budget.admitRows(reports((0..<35).map { "z\($0)" }), appID: adjacent, now: hour) == nil)
        #expect(budget.admitRows(reports(["caf\u{E9}", "cafe\u{301}"]), appID: adjacent, now: hour) != nil)
        #expect(budget.admitRows(reports(["caf\u{E9}", "caf\u{E9}"]), appID: adjacent, now: hour) == nil)

        #expect(budget.storableFailures(3, appID: app, now: hour) == 1)
        #expect(budget.storableFailures(1, appID: app, now: hour.addingTimeInterval(10)) == 0)
        budget.refundFailures(1, appID: app)
        #expect(budget.storableFailures(2, appID: app, now: hour.addingTimeInterval(20)) == 1)
        #expect(budget.storableFailures(0, appID: app, now: hour) == 0)
        #expect(budget.storableFailures(2, appID: app, now: hour.addingTimeInterval(7200)) == 1)
    }
}
