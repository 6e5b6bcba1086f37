@testable import CofferServer
import Fluent
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Testing

/// Migration 017: on PostgreSQL `report_devices` loses its foreign key to `deployments` (each
/// inserted row's check was a query of its own, the largest cost of a flush); SQLite keeps it.
@Suite("Migration 017 (report devices without a foreign key on PostgreSQL)")
struct ReportDeviceKeyMigrationTests {
    @Test("SQLite: report_devices still references deployments")
    func sqlite() async throws {
        try await Self.withServer(postgres: false) { server in
            let sql = try #require(server.app.db as? any SQLDatabase)
            let keys = try await sql.raw("SELECT \"table\" FROM pragma_foreign_key_list('report_devices')").all()
            #expect(try keys.map { try $0.decode(column: "table", as: String.self) } == ["deployments"])
        }
    }

    @Test("PostgreSQL: report_devices has no foreign key to deployments after a start, report_events keeps its own; revert adds it back, prepare drops it again and only it",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws {
        try await Self.withServer(postgres: true) { server in
            let db = server.app.db
            let sql = try #require(db as? any SQLDatabase)
            #expect(try await Self.foreignKeys(of: "report_devices", on: sql) == [])
            #expect(try await Self.foreignKeys(of: "report_events", on: sql).count == 1)
            try await DropReportDeviceForeignKey().revert(on: db)
            #expect(try await Self.foreignKeys(of: "report_devices", on: sql) == [DropReportDeviceForeignKey.revertedName])

            // A key to another table (an operator's own) is not the migration's to drop.
            try await sql.raw("CREATE TABLE coffer_test_other (id uuid PRIMARY KEY)").run()
            try await sql.raw("""
                ALTER TABLE report_devices ADD CONSTRAINT coffer_test_other_key \
                FOREIGN KEY (deployment_id) REFERENCES coffer_test_other (id) NOT VALID
                """).run()
            try await DropReportDeviceForeignKey().prepare(on: db)
            #expect(try await Self.foreignKeys(of: "report_devices", on: sql) == ["coffer_test_other_key"])
            // A second instance running it after the first finds nothing to drop, and says nothing.
            try await DropReportDeviceForeignKey().prepare(on: db)
            #expect(try await Self.foreignKeys(of: "report_devices", on: sql) == ["coffer_test_other_key"])
        }
    }

    @Test("PostgreSQL: while another session holds report_devices, each attempt gives up after its lock timeout; it is tried again and succeeds once the lock is gone, or fails with the lock timeout after its attempts",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func waitsBoundedly() async throws {
        try await Self.withServer(postgres: true) { server in
            let db = server.app.db
            let sql = try #require(db as? any SQLDatabase)
            try await DropReportDeviceForeignKey().revert(on: db)
            // The lock is held through a second instance's pool (one event loop's pool has one
            // connection, and the migration must not wait for the holder's), on the same data.
            try await Self.withServer(postgres: true, databaseURL: server.configuration.databaseURL,
                                      dataDirectory: server.dataDirectory) { other in
                try await Self.boundedWaits(db: db, sql: sql, holderDB: other.app.db)
            }
        }
    }

    private static func boundedWaits(db: any Database, sql: any SQLDatabase, holderDB: any Database) async throws {
        // Held until released (at most 30 s): without its lock timeout the migration would wait
        // for the holder and succeed; it must give up after its two attempts instead.
        let attempts = NIOLockedValueBox(0)
        var quick = DropReportDeviceForeignKey(lockTimeout: .milliseconds(100), pause: .milliseconds(50), attempts: 2)
        quick.attemptStarted = { number in attempts.withLockedValue { $0 = number } }
        let release = Release()
        let holder = Task { try await Self.holdLock(on: holderDB, until: release) }
        try await release.waitUntilHeld()
        do {
            try await quick.prepare(on: db)
            Issue.record("the migration went on while another session held report_devices")
        } catch {
            #expect(DropReportDeviceForeignKey.isLockTimeout(error), "not a lock timeout: \(String(reflecting: error))")
        }
        #expect(attempts.withLockedValue { $0 } == 2)
        release.open()
        try await holder.value
        #expect(try await foreignKeys(of: "report_devices", on: sql) == [DropReportDeviceForeignKey.revertedName])

        // Held until the third attempt starts (two have given up): a later attempt succeeds.
        let again = Release()
        var patient = DropReportDeviceForeignKey(lockTimeout: .milliseconds(100), pause: .milliseconds(50), attempts: 1000)
        patient.attemptStarted = { number in if number >= 3 { again.open() } }
        let second = Task { try await Self.holdLock(on: holderDB, until: again) }
        try await again.waitUntilHeld()
        try await patient.prepare(on: db)
        try await second.value
        #expect(try await foreignKeys(of: "report_devices", on: sql) == [])
    }

    /// The names of `table`'s foreign keys, sorted.
    static func foreignKeys(of table: String, on sql: any SQLDatabase) async throws -> [String] {
        try await sql.raw("""
            SELECT conname::text AS name FROM pg_constraint WHERE conrelid = \(bind: table)::regclass AND contype = 'f' ORDER BY 1
            """).all().map { try $0.decode(column: "name", as: String.self) }
    }

    /// Holds a lock on `report_devices` that `ALTER TABLE` must wait for, in a transaction on a
    /// connection of its own, until `release` opens or 30 s have passed (a migration that waits
    /// for the lock, where it should have given up, then fails the test rather than hanging it).
    static func holdLock(on db: any Database, until release: Release) async throws {
        try await db.transaction { tx in
            let sql = try #require(tx as? any SQLDatabase)
            try await sql.raw("LOCK TABLE report_devices IN ACCESS SHARE MODE").run()
            release.markHeld()
            let end = ContinuousClock.now + .seconds(30)
            while !release.isOpen, ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    /// A started server, stopped (awaited) when `body` returns or throws.
    /// Given a data directory (another server's), it is left in place.
    static func withServer(postgres: Bool, databaseURL: String? = nil, dataDirectory: String? = nil,
                           _ body: (TestServer) async throws -> Void) async throws {
        let server = try await TestServer.start(postgres: postgres, dataDirectory: dataDirectory, databaseURL: databaseURL)
        do {
            try await body(server)
        } catch {
            try? await server.stop(removingData: dataDirectory == nil)
            throw error
        }
        try await server.stop(removingData: dataDirectory == nil)
    }

    /// When the lock holder has its lock, and when it should let go.
    final class Release: @unchecked Sendable {
        private let lock = NSLock()
        private var held = false
        private var opened = false
        var isOpen: Bool { lock.withLock { opened } }
        func open() { lock.withLock { opened = true } }
        func markHeld() { lock.withLock { held = true } }
        func waitUntilHeld() async throws {
            var polls = 0
            while !lock.withLock({ held }) {
                guard polls < 3000 else { throw TestFailure("the lock holder did not get its lock in 30 s") }
                polls += 1
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }
}
