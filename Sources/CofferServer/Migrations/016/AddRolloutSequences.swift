import Fluent
import SQLKit

/// 016: which staged activation each device's outcomes count for (docs/ROLLOUTS.md, "Failure rate").
///
/// - `rollouts.start_sequence`: the collection's sequence number the staged activation started
///   with (its first stage's manifests carry it).
/// - `report_devices.rollout_sequence`: the `start_sequence` of the deployment's staged activation
///   whose counts the row's outcomes are, or 0 for outcomes from before any (while the deployment
///   was active for every device, or reported on a manifest older than its newest staged activation).
///
/// Rows and rollouts from before get 0: a rollout running across the upgrade goes on counting every
/// report of its deployment, as it did; the next staged activation counts its own.
///
/// Released migrations are never edited.
struct AddRolloutSequences: AsyncMigration {
    var name: String { "016_AddRolloutSequences" }

    func prepare(on database: any Database) async throws {
        // One transaction (Fluent's migrator runs a migration in none): a second statement that
        // failed (a lock timeout behind a flush) would leave the first column added, and the
        // migration run again would fail on it.
        try await database.transaction { database in
            guard let sql = database as? any SQLDatabase else { return }
            // One column a statement (SQLite's ALTER TABLE adds one at a time), each NOT NULL with
            // a default: SQLite adds a NOT NULL column only with one, and it fills the rows already
            // there without rewriting them (on PostgreSQL too, from version 11).
            try await sql.alter(table: RolloutRecord.schema).column("start_sequence", type: .bigint, .notNull, .default(0)).run()
            try await sql.alter(table: ReportTables.devices).column("rollout_sequence", type: .bigint, .notNull, .default(0)).run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ReportTables.devices).deleteField("rollout_sequence").update()
        try await database.schema(RolloutRecord.schema).deleteField("start_sequence").update()
    }
}
