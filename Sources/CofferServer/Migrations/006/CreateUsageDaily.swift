import Fluent
import SQLKit

/// 006: daily usage counts for the dashboard's charts (downloads per blob, deliveries per key; see
/// ``UsageKind``), and an index that lets the activity page read one team's audit log by time.
/// Released migrations are never edited.
struct CreateUsageDaily: AsyncMigration {
    var name: String { "006_CreateUsageDaily" }

    func prepare(on database: any Database) async throws {
        try await database.schema("usage_daily")
            .id()
            .field("day", .string, .required)
            .field("kind", .string, .required)
            .field("subject", .string, .required)
            .field("count", .int64, .required)
            .unique(on: "day", "kind", "subject")
            .create()
        if let sql = database as? any SQLDatabase {
            try await sql.create(index: "audit_events_team_at").on("audit_events").column("team_id").column("at").run()
        }
    }

    func revert(on database: any Database) async throws {
        if let sql = database as? any SQLDatabase {
            try await sql.drop(index: "audit_events_team_at").run()
        }
        try await database.schema("usage_daily").delete()
    }
}
