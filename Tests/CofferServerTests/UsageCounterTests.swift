@testable import CofferServer
import Fluent
import Foundation
import SQLKit
import Testing

/// The download and key-delivery counter behind the activity charts: in memory on the request
/// path, added to `usage_daily` by periodic flushes and at shutdown, kept across restarts.
@Suite("Usage counter")
struct UsageCounterTests {
    @Test("counts per day, kind and subject; only downloads from byte 0; take empties, restore adds back")
    func counting() {
        let counter = UsageCounter()
        counter.count(.keyDelivery, "key-1")
        counter.count(.keyDelivery, "key-1")
        counter.countDownload("blob", from: 0)
        counter.countDownload("blob", from: 4096)
        #expect(counter.pendingCount == 3)
        let taken = counter.take()
        #expect(counter.pendingCount == 0)
        #expect(taken[.init(day: UsageDay(), kind: .keyDelivery, subject: "key-1")] == 2)
        #expect(taken[.init(day: UsageDay(), kind: .download, subject: "blob")] == 1)
        counter.count(.download, "blob")
        counter.restore(taken)
        #expect(counter.take()[.init(day: UsageDay(), kind: .download, subject: "blob")] == 2)
    }

    @Test("UTC days: parsed, printed and ordered as the calendar has them")
    func days() throws {
        #expect(UsageDay(Date(timeIntervalSince1970: 0)).text == "1970-01-01")
        #expect(UsageDay(Date(timeIntervalSince1970: 86_399)).text == "1970-01-01")
        for text in ["2024-02-29", "2026-11-22", "2000-03-01", "2099-12-31"] {
            #expect(try #require(UsageDay(text)).text == text)
        }
        for text in ["2026-02-29", "2026-13-01", "2026-1-01", "yesterday", "", "2026-11-22T00:00"] {
            #expect(UsageDay(text) == nil, "\(text)")
        }
        #expect(try #require(UsageDay("2026-11-22")).advanced(by: 10).text == "2026-12-02")
        #expect(UsageDay("2026-11-21")! < UsageDay("2026-11-22")!)
    }

    @Test("the chart's scale: 1, 2, 5 steps")
    func niceCeiling() {
        #expect([0, 1, 2, 3, 6, 10, 11, 49, 51, 999].map { BarChart.niceCeiling($0) } == [1, 1, 2, 5, 10, 10, 20, 50, 100, 1000])
    }

    @Test("counts are flushed at shutdown and added to across restarts (SQLite)")
    func restartSQLite() async throws { try await Self.restart(.sqlite) }

    @Test("counts are flushed at shutdown and added to across restarts (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func restartPostgres() async throws { try await Self.restart(.postgres) }

    static func restart(_ backend: Backend) async throws {
        let first = try await TestServer.start(postgres: backend.isPostgres)
        let flowers = try await Flowers.make(first)
        let blob = try await flowers.upload("a")
        for _ in 0..<3 { #expect(try await HTTP(base: first.base).call("GET", "/v1/blobs/\(blob)").status == 200) }
        // The key is delivered only once a deployment of the app's collection that uses it is active.
        let (draft, _) = try await flowers.deployment("counted", models: ["FlowerClassifier": blob, "FlowerStylizer": blob])
        #expect(try await flowers.activate(try #require(draft)).status == 200)
        #expect(try await Device().request(flowers.key.id, app: flowers.app, on: first).status == 200)
        let database = first.configuration.databaseURL
        try await first.stop(removingData: false)

        let second = try await TestServer.start(postgres: backend.isPostgres, dataDirectory: first.dataDirectory, databaseURL: database)
        #expect(try await Self.count(.download, blob, on: second) == 3)
        #expect(try await Self.count(.keyDelivery, flowers.key.id, on: second) == 1)
        for _ in 0..<2 { #expect(try await HTTP(base: second.base).call("GET", "/v1/blobs/\(blob)").status == 200) }
        try await second.stop(removingData: false)

        let third = try await TestServer.start(postgres: backend.isPostgres, dataDirectory: first.dataDirectory, databaseURL: database)
        #expect(try await Self.count(.download, blob, on: third) == 5)
        #expect(try await UsageDailyRecord.query(on: third.app.db).count() == 2, "one row per day, kind and subject")
        try await third.stop()
        if let database { PostgresDatabases.drop(database) }
    }

    @Test("a running server flushes periodically, without a page visit or a shutdown")
    func periodicFlush() async throws {
        let server = try await TestServer.start { $0.usageFlushInterval = 0.2 }
        defer { Task { try? await server.stop() } }
        try await server.app.asyncBoot()
        let flowers = try await Flowers.make(server)
        let blob = try await flowers.upload("a")
        #expect(try await HTTP(base: server.base).call("GET", "/v1/blobs/\(blob)").status == 200)
        var flushed: Int64 = 0
        for _ in 0..<50 where flushed == 0 {
            try await Task.sleep(for: .milliseconds(100))
            flushed = try await Self.count(.download, blob, on: server)
        }
        #expect(flushed == 1)
    }

    @Test("a flush that fails after writing some of its statements keeps only the counts it did not write: none is added twice")
    func partialFailure() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let sql = try #require(server.app.db as? any SQLDatabase)
        let counter = UsageCounter()
        // 601 subjects: two statements (500 rows a statement), the second holding the row the database refuses.
        let subjects = (0..<600).map { "a-\(1000 + $0)" } + ["z-refused"]
        for subject in subjects { counter.count(.download, subject) }
        try await sql.raw("""
            CREATE TRIGGER refuse_usage BEFORE INSERT ON usage_daily WHEN NEW.subject = 'z-refused'
            BEGIN SELECT RAISE(ABORT, 'refused'); END
            """).run()
        await #expect(throws: (any Error).self) { try await counter.flush(on: server.app.db) }
        #expect(counter.pendingCount == 101, "the first statement's 500 counts are stored; the second's 101 are kept")
        try await sql.raw("DROP TRIGGER refuse_usage").run()
        try await counter.flush(on: server.app.db)

        let rows = try await UsageDailyRecord.query(on: server.app.db).all()
        #expect(rows.count == subjects.count)
        let twice = rows.filter { $0.count != 1 }.map(\.subject)
        #expect(twice.isEmpty, "\(twice.count) subjects not counted once, e.g. \(twice.prefix(3))")
    }

    static func count(_ kind: UsageKind, _ subject: String, on server: TestServer) async throws -> Int64 {
        try await UsageDailyRecord.query(on: server.app.db).filter(\.$kind == kind.rawValue).filter(\.$subject == subject).all()
            .reduce(0) { $0 + $1.count }
    }
}
