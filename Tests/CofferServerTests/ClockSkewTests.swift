import Crypto
import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import CofferServer

/// Instances sharing one PostgreSQL database judge each other's leases and timers by their own
/// clocks: one whose clock is far off must not start, and a running one shows the difference.
@Suite("Clock skew against the database")
struct ClockSkewTests {
    @Test("SQLite: nothing to compare with, the server starts whatever its clock says")
    func sqliteIsNotMeasured() async throws {
        let server = try await TestServer.start { $0.clockOffset = 3600 }
        #expect(try await ClockSkew.measure(on: server.app.db) == nil)
        try await server.stop()
    }

    @Test("PostgreSQL: coffer-server check reports a clock an hour off with serve's line, and nothing of a right one",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func checkReportsAFarClock() async throws {
        let databaseURL = try await PostgresDatabases.create()
        defer { PostgresDatabases.drop(databaseURL) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-check-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let master = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
        var configuration = ServerConfiguration(dataDirectory: folder, hostname: "127.0.0.1", port: 0, databaseURL: databaseURL,
                                                masterKeyBase64: master)
        configuration.clockOffset = 3600
        let far = await ConfigurationCheck.run(configuration)
        #expect(far.problems.contains { $0.contains(" s ahead of the database's (at most 60 s allowed)") }, "\(far.problems)")
        configuration.clockOffset = 0
        let right = await ConfigurationCheck.run(configuration)
        #expect(!right.problems.contains { $0.contains("the database's") }, "\(right.problems)")
    }

    @Test("PostgreSQL: a clock an hour off either way stops the start with one line; a right one starts and is measured",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgresRefusesAFarClock() async throws {
        let databaseURL = try await PostgresDatabases.create()
        defer { PostgresDatabases.drop(databaseURL) }
        for (offset, words) in [(3600.0, "ahead of"), (-3600.0, "behind")] {
            do {
                let server = try await TestServer.start(postgres: true, databaseURL: databaseURL) { $0.clockOffset = offset }
                try await server.stop()
                Issue.record("a server \(offset) s off started")
            } catch {
                // About an hour: the measure is the query's midpoint, off by up to half its round
                // trip on a loaded machine.
                let line = String(describing: error)
                let seconds = line.firstRange(of: "clock is ").flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) }
                #expect(seconds.map { abs($0 - 3600) <= 60 } == true && line.contains(" s \(words) the database's"), "\(line)")
                #expect(!line.contains("\n"))
            }
        }

        let server = try await TestServer.start(postgres: true, databaseURL: databaseURL) { $0.clockOffset = 5 }
        try await server.app.asyncBoot()  // starts the periodic comparison
        let measured = try #require(try await ClockSkew.measure(on: server.app.db))
        // The database runs on this host: the same clock, to within the query's round trip.
        #expect(abs(measured.skew) < 2 + measured.uncertainty, "\(measured)")
        // A reading that waited (here: 10 s pass on this clock during the first query, read before and after it) is not the
        // one kept: the shortest round trip is.
        let calls = NIOLockedValueBox(0)
        let slowFirst = try #require(try await ClockSkew.measure(on: server.app.db, clock: {
            Date().addingTimeInterval(calls.withLockedValue { $0 += 1; return $0 } == 2 ? 10 : 0)
        }))
        #expect(slowFirst.uncertainty < 1 && abs(slowFirst.skew) < 2 + slowFirst.uncertainty, "\(slowFirst)")
        let offset = try #require(try await ClockSkew.measure(on: server.app.db, clock: { Date().addingTimeInterval(-120) }))
        #expect(offset.exceeds(ClockSkew.limit) && offset.skew > 100, "\(offset)")
        // The periodic comparison runs once at start: the 5 s the test put on this server's clock shows.
        var shown: Double?
        for _ in 0..<50 where shown == nil {
            let metrics = String(decoding: try await HTTP(base: server.base).call("GET", "/metrics").body, as: UTF8.self)
            shown = metrics.split(separator: "\n").first { $0.hasPrefix("coffer_clock_skew_seconds ") }
                .flatMap { Double($0.split(separator: " ")[1]) }
            if shown == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let seconds = try #require(shown, "no coffer_clock_skew_seconds in /metrics")
        #expect(seconds < -4 && seconds > -7, "\(seconds)")
        try await server.stop(removingData: true)
    }
}
