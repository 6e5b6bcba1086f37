import Fluent
import FluentPostgresDriver
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
/// Dropping the key locks `report_devices` and `deployments` exclusively. During a rolling upgrade
/// the older instances keep flushing reports, and a waiting `ALTER TABLE` queues every other
/// reader of both tables behind it; so an attempt waits at most ``lockTimeout`` for each of its two
/// locks (`SET LOCAL lock_timeout`), gives up whole (one transaction; a deadlock with another
/// session's locks ends it too), and is tried again after ``pause``, up to ``attempts`` times; then
/// the start fails with PostgreSQL's "lock timeout" error (`configure` does not try the migrations
/// again for it). Only the key that references `deployments` is dropped, `IF EXISTS` (two instances
/// may start at once).
///
/// Released migrations are never edited.
struct DropReportDeviceForeignKey: AsyncMigration {
    /// The longest one attempt waits for its table locks.
    var lockTimeout: Duration = .seconds(2)
    /// The pause between attempts.
    var pause: Duration = .seconds(1)
    /// Attempts before the migration fails.
    var attempts = 10
    /// Told each attempt's number as it starts (tests).
    var attemptStarted: (@Sendable (Int) -> Void)?

    var name: String { "017_DropReportDeviceForeignKey" }

    func prepare(on database: any Database) async throws {
        guard Self.isPostgres(database) else { return }
        try await withLockRetries(on: database) { sql in
            // The constraint's name is Fluent's; it is looked up rather than spelt out.
            let rows = try await sql.raw("""
                SELECT conname::text AS name FROM pg_constraint \
                WHERE conrelid = \(bind: ReportTables.devices)::regclass \
                AND confrelid = \(bind: DeploymentRecord.schema)::regclass AND contype = 'f'
                """).all()
            for row in rows {
                let name = try row.decode(column: "name", as: String.self)
                try await sql.raw("ALTER TABLE \(ident: ReportTables.devices) DROP CONSTRAINT IF EXISTS \(ident: name)").run()
            }
        }
    }

    /// Adds the key back, checked against the rows already there: a device row whose deployment
    /// no longer exists (none does unless one was deleted by hand, since no route deletes a
    /// deployment) fails the revert with PostgreSQL's foreign-key error, and nothing is changed.
    func revert(on database: any Database) async throws {
        guard Self.isPostgres(database) else { return }
        try await withLockRetries(on: database) { sql in
            try await sql.raw("""
                ALTER TABLE \(ident: ReportTables.devices) ADD CONSTRAINT \(ident: Self.revertedName) \
                FOREIGN KEY (deployment_id) REFERENCES \(ident: DeploymentRecord.schema) (id) ON DELETE CASCADE
                """).run()
        }
    }

    /// The name `revert` gives the key it adds.
    static let revertedName = "report_devices_deployment_id_fkey"

    private static func isPostgres(_ database: any Database) -> Bool {
        (database as? any SQLDatabase)?.dialect.name == "postgresql"
    }

    /// Runs `body` in a transaction whose lock waits end after `lockTimeout`; a lock timeout or a
    /// deadlock is tried again after `pause`, up to `attempts` times in all. Inside a caller's
    /// transaction (which an error aborts, and whose end `SET LOCAL` would last until) it runs once.
    private func withLockRetries(on database: any Database, _ body: @escaping @Sendable (any SQLDatabase) async throws -> Void) async throws {
        let milliseconds = lockTimeout.components.seconds * 1000 + lockTimeout.components.attoseconds / 1_000_000_000_000_000
        var attempt = 1
        while true {
            do {
                attemptStarted?(attempt)
                try await database.transaction { tx in
                    guard let sql = tx as? any SQLDatabase else { throw Self.notSQL }
                    try await sql.raw("SET LOCAL lock_timeout = \(unsafeRaw: String(max(1, milliseconds)))").run()
                    try await body(sql)
                }
                return
            } catch where attempt < attempts && !database.inTransaction
                && (Self.isLockTimeout(error) || type(of: database).isTransient(error)) {
                try await Task.sleep(for: pause)
                attempt += 1
            }
        }
    }

    private static let notSQL = ServerSetupError("migration 017: the database does not take SQL")

    /// PostgreSQL's `lock_not_available` (55P03), which a lock timeout raises.
    static func isLockTimeout(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "55P03"
    }
}
