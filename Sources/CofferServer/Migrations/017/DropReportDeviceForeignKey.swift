import Fluent
import SQLKit

/// 017: on PostgreSQL, `report_devices.deployment_id` no longer references `deployments` by a
/// foreign key.
///
/// PostgreSQL checks a foreign key of each inserted row with a query of its own (a trigger that
/// selects and share-locks the deployment), and every new device a flush writes is an insert: in a
/// profile of `bench/reports.sh` on PostgreSQL that check was 28 % of the database backend's CPU,
/// and the flush fell behind the device port (503 `reports_backlog`). The key guarded nothing the
/// server does not already hold: a report is taken only for an activated deployment of the app's
/// team (``ReportEndpoint``), and no route deletes a deployment, so the cascade it declared never
/// ran. SQLite keeps the key (its check is one index lookup, and dropping it would rebuild the table).
///
/// Released migrations are never edited.
struct DropReportDeviceForeignKey: AsyncMigration {
    var name: String { "017_DropReportDeviceForeignKey" }

    func prepare(on database: any Database) async throws {
        guard let sql = database as? any SQLDatabase, sql.dialect.name == "postgresql" else { return }
        // The constraint's name is Fluent's; it is looked up rather than spelt out.
        let rows = try await sql.raw("""
            SELECT conname::text AS name FROM pg_constraint \
            WHERE conrelid = \(bind: ReportTables.devices)::regclass AND contype = 'f'
            """).all()
        for row in rows {
            let name = try row.decode(column: "name", as: String.self)
            try await sql.raw("ALTER TABLE \(ident: ReportTables.devices) DROP CONSTRAINT \(ident: name)").run()
        }
    }

    func revert(on database: any Database) async throws {
        guard let sql = database as? any SQLDatabase, sql.dialect.name == "postgresql" else { return }
        try await sql.raw("""
            ALTER TABLE \(ident: ReportTables.devices) ADD FOREIGN KEY (deployment_id) \
            REFERENCES \(ident: DeploymentRecord.schema) (id) ON DELETE CASCADE
            """).run()
    }
}
