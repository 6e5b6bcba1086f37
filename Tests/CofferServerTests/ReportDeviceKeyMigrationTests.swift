@testable import CofferServer
import Fluent
import Foundation
import SQLKit
import Testing

/// Migration 017: on PostgreSQL `report_devices` loses its foreign key to `deployments` (each
/// inserted row's check was a query of its own, the largest cost of a flush); SQLite keeps it.
@Suite("Migration 017 (report devices without a foreign key on PostgreSQL)")
struct ReportDeviceKeyMigrationTests {
    @Test("SQLite: report_devices still references deployments")
    func sqlite() async throws {
        let server = try await TestServer.start(postgres: false)
        defer { Task { try? await server.stop() } }
        let sql = try #require(server.app.db as? any SQLDatabase)
        let keys = try await sql.raw("SELECT \"table\" FROM pragma_foreign_key_list('report_devices')").all()
        #expect(try keys.map { try $0.decode(column: "table", as: String.self) } == ["deployments"])
    }

    @Test("PostgreSQL: report_devices has no foreign key after a start, report_events keeps its own; revert adds it back, prepare drops it again",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws {
        let server = try await TestServer.start(postgres: true)
        defer { Task { try? await server.stop() } }
        let db = server.app.db
        let sql = try #require(db as? any SQLDatabase)
        func foreignKeys(_ table: String) async throws -> Int {
            let row = try await sql.raw("""
                SELECT count(*)::bigint AS n FROM pg_constraint WHERE conrelid = \(bind: table)::regclass AND contype = 'f'
                """).first()
            return try #require(row).decode(column: "n", as: Int.self)
        }
        #expect(try await foreignKeys("report_devices") == 0)
        #expect(try await foreignKeys("report_events") == 1)
        try await DropReportDeviceForeignKey().revert(on: db)
        #expect(try await foreignKeys("report_devices") == 1)
        try await DropReportDeviceForeignKey().prepare(on: db)
        #expect(try await foreignKeys("report_devices") == 0)
    }
}
