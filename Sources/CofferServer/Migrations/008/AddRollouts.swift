import Fluent
import SQLKit

/// 008: health-gated rollouts (issue 16).
///
/// - `rollouts`: a staged activation of a deployment: its stages, gates, current stage and state.
/// - `report_devices`: per deployment, model and device, the outcomes that device reported (a bit
///   each), so counts are of devices and a retried report never counts twice; the hour of its first
///   report (hours since 1970, UTC) for the adoption chart.
/// - `report_events`: raw failure reports with their reasons, unique per app and event ID, kept for
///   a bounded window.
///
/// Released migrations are never edited.
struct AddRollouts: AsyncMigration {
    var name: String { "008_AddRollouts" }

    func prepare(on database: any Database) async throws {
        try await database.schema(RolloutRecord.schema)
            .id()
            .field("collection_id", .uuid, .required, .references("collections", "id", onDelete: .cascade))
            .field("deployment_id", .uuid, .required, .references("deployments", "id", onDelete: .cascade))
            .field("previous_deployment_id", .uuid, .required, .references("deployments", "id", onDelete: .cascade))
            .field("stages", .string, .required)
            .field("stage_index", .int, .required)
            .field("stage_hours", .double, .required)
            .field("halt_at", .double, .required)
            .field("min_reports", .int, .required)
            .field("state", .string, .required)
            .field("stage_started_at", .datetime, .required)
            .field("halt_reason", .string)
            .field("created_by", .string, .required)
            .field("created_at", .datetime)
            .create()
        try await database.schema(ReportTables.devices)
            .id()
            .field("deployment_id", .uuid, .required, .references("deployments", "id", onDelete: .cascade))
            .field("model", .string, .required)
            .field("device_id", .string, .required)
            .field("outcomes", .int, .required)
            .field("stage", .int, .required)
            .field("first_at", .datetime, .required)
            .field("first_hour", .int64, .required)
            .field("last_at", .datetime, .required)
            .unique(on: "deployment_id", "model", "device_id")
            .create()
        try await database.schema(ReportTables.events)
            .id()
            .field("app_id", .uuid, .required)
            .field("event_id", .string, .required)
            .field("deployment_id", .uuid, .required, .references("deployments", "id", onDelete: .cascade))
            .field("model", .string, .required)
            .field("device_id", .string, .required)
            .field("outcome", .string, .required)
            .field("reason", .string)
            .field("sequence", .int64, .required)
            .field("at", .datetime, .required)
            .field("received_at", .datetime, .required)
            .unique(on: "app_id", "event_id")
            .create()
        if let sql = database as? any SQLDatabase {
            try await sql.create(index: "rollouts_state").on(RolloutRecord.schema).column("state").run()
            try await sql.create(index: "report_events_deployment_received").on(ReportTables.events)
                .column("deployment_id").column("received_at").run()
            try await sql.create(index: "report_events_received").on(ReportTables.events).column("received_at").run()
            try await sql.create(index: "report_devices_deployment_hour").on(ReportTables.devices).column("deployment_id").column("first_hour").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ReportTables.events).delete()
        try await database.schema(ReportTables.devices).delete()
        try await database.schema(RolloutRecord.schema).delete()
    }
}
