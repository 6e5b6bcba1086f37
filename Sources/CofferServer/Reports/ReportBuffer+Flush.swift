import Fluent
import FluentSQLiteDriver
import Foundation
import SQLKit

/// The report tables, written with SQL (no Fluent model per row: a flush writes many).
enum ReportTables {
    static let devices = "report_devices"
    static let events = "report_events"
    /// A device row's `last_at` on conflict: the later of the two. Events come up to a week late
    /// (the device picks `at`), so a later flush may bring an earlier time.
    static let laterLastAt = "CASE WHEN excluded.last_at > \(devices).last_at THEN excluded.last_at ELSE \(devices).last_at END"
}

extension ReportBuffer {
    /// Writes what is pending in one transaction: each device's outcome set merged by OR into
    /// `report_devices`, and the failures into `report_events` (an event ID already stored is
    /// skipped); then, at most once a minute, removes raw events older than `retention`. On failure
    /// everything is kept for the next flush. Returns the deployments that got reports.
    @discardableResult
    func flush(on database: any Database, retention: TimeInterval, now: Date = Date()) async throws -> Set<UUID> {
        let pending = take()
        let touched = Set(pending.devices.keys.map(\.deploymentID))
        if pending.count > 0 {
            do {
                try await database.writeTransaction { db in
                    guard let sql = db as? any SQLDatabase else { return }
                    if sql.dialect.name == "sqlite" {
                        // For this connection: a multi-row upsert keeps a statement journal, which
                        // SQLite spilled to a temporary file past 64 KiB; and a flush touches more
                        // pages than the default 2 MiB cache holds, which it spilled to the database
                        // file mid-transaction and read back.
                        try await sql.raw("PRAGMA temp_store = MEMORY").run()
                        try await sql.raw("PRAGMA cache_size = -32768").run()
                    }
                    var ids = ReportRowIDs(now: now)
                    try await Self.writeDevices(pending.devices, ids: &ids, on: sql)
                    try await Self.writeEvents(pending.events, ids: &ids, on: sql)
                }
            } catch {
                restore(pending)
                throw error
            }
        }
        if prunesNow(now), let sql = database as? any SQLDatabase {
            try await sql.delete(from: ReportTables.events)
                .where("received_at", .lessThan, SQLBind(now.addingTimeInterval(-retention))).run()
        }
        return touched
    }

    private static func writeDevices(_ devices: [DeviceKey: DeviceState], ids: inout ReportRowIDs, on sql: any SQLDatabase) async throws {
        let rows = Array(devices)
        if sql.dialect.name == "postgresql" { return try await writeDevicesInArrays(lockOrdered(rows), ids: &ids, on: sql) }
        if let sqlite = sql as? any SQLiteDatabase { return try await writeDevices(rows, ids: &ids, on: sqlite) }
        for start in stride(from: 0, to: rows.count, by: 500) {
            let insert = sql.insert(into: ReportTables.devices)
                .columns("id", "deployment_id", "model", "device_id", "outcomes", "stage", "first_at", "first_hour", "last_at")
            for (key, device) in rows[start..<min(start + 500, rows.count)] {
                insert.values(SQLBind(ids.next()), SQLBind(key.deploymentID), SQLBind(key.model), SQLBind(key.deviceID),
                              SQLBind(device.outcomes), SQLBind(device.stage), SQLBind(device.first),
                              SQLBind(Int64((device.first.timeIntervalSince1970 / 3600).rounded(.down))), SQLBind(device.last))
            }
            try await insert.onConflict(with: ["deployment_id", "model", "device_id"]) {
                $0.set("outcomes", to: SQLRaw("\(ReportTables.devices).outcomes | excluded.outcomes"))
                    .set("last_at", to: SQLRaw(ReportTables.laterLastAt))
            }.run()
        }
    }

    private static func writeEvents(_ events: [Event], ids: inout ReportRowIDs, on sql: any SQLDatabase) async throws {
        let events = sql.dialect.name == "postgresql" ? lockOrdered(events) : events
        for start in stride(from: 0, to: events.count, by: 500) {
            let insert = sql.insert(into: ReportTables.events)
                .columns("id", "app_id", "event_id", "deployment_id", "model", "device_id", "outcome", "reason", "sequence", "at", "received_at")
            for event in events[start..<min(start + 500, events.count)] {
                let report = event.report
                insert.values(SQLBind(ids.next()), SQLBind(event.appID), SQLBind(event.failure.eventID), SQLBind(report.deploymentID),
                              SQLBind(report.model), SQLBind(report.deviceID), SQLBind(report.outcome.rawValue), SQLBind(event.failure.reason),
                              SQLBind(report.sequence), SQLBind(report.at), SQLBind(event.receivedAt))
            }
            try await insert.ignoringConflicts(with: ["app_id", "event_id"]).run()
        }
    }

    /// PostgreSQL: each column bound as one array and the rows made by `unnest`, 5 000 rows a
    /// statement. A `VALUES` list of 500 rows (4 500 parameters, each encoded and sent on its own)
    /// fell behind devices at ~13 000 batches a second and the buffer filled up (503).
    private static func writeDevicesInArrays(_ rows: [(key: DeviceKey, value: DeviceState)], ids: inout ReportRowIDs,
                                             on sql: any SQLDatabase) async throws {
        for start in stride(from: 0, to: rows.count, by: 5000) {
            let part = rows[start..<min(start + 5000, rows.count)]
            var keys: [UUID] = [], deployments: [UUID] = [], models: [String] = [], devices: [String] = []
            var outcomes: [Int] = [], stages: [Int] = [], firsts: [Date] = [], hours: [Int64] = [], lasts: [Date] = []
            for (key, device) in part {
                keys.append(ids.next())
                deployments.append(key.deploymentID)
                models.append(key.model)
                devices.append(key.deviceID)
                outcomes.append(device.outcomes)
                stages.append(device.stage)
                firsts.append(device.first)
                hours.append(Int64((device.first.timeIntervalSince1970 / 3600).rounded(.down)))
                lasts.append(device.last)
            }
            let table = SQLIdentifier(ReportTables.devices)
            try await sql.raw("""
                INSERT INTO \(table) (id, deployment_id, model, device_id, outcomes, stage, first_at, first_hour, last_at)
                SELECT * FROM unnest(\(bind: keys)::uuid[], \(bind: deployments)::uuid[], \(bind: models)::text[], \(bind: devices)::text[],
                                     \(bind: outcomes)::bigint[], \(bind: stages)::bigint[], \(bind: firsts)::timestamptz[],
                                     \(bind: hours)::bigint[], \(bind: lasts)::timestamptz[])
                ON CONFLICT (deployment_id, model, device_id)
                DO UPDATE SET outcomes = \(table).outcomes | excluded.outcomes, last_at = \(unsafeRaw: ReportTables.laterLastAt)
                """).run()
        }
    }

    /// SQLite: the statement's text made once per size and the values bound as SQLite's own
    /// (UUIDs as the uppercase text Fluent writes, times as seconds since 1970). Building each
    /// statement through SQLKit, every value encoded through `Encodable`
    /// and every UUID formatted with `snprintf`, was a third of a flush's CPU. 3 000 rows a
    /// statement (27 000 parameters; SQLite takes up to 32 766): each statement's answer comes
    /// back through an event loop busy with devices, and with 500 rows a statement those waits
    /// made a flush of 25 000 rows last two seconds while the buffer filled (503).
    private static func writeDevices(_ rows: [(key: DeviceKey, value: DeviceState)], ids: inout ReportRowIDs,
                                     on sqlite: any SQLiteDatabase) async throws {
        var statements: [Int: String] = [:]
        for start in stride(from: 0, to: rows.count, by: 3000) {
            let part = rows[start..<min(start + 3000, rows.count)]
            var binds: [SQLiteData] = []
            binds.reserveCapacity(part.count * 9)
            for (key, device) in part {
                binds.append(.text(ids.next().uppercaseHexText))
                binds.append(.text(key.deploymentID.uppercaseHexText))
                binds.append(.text(key.model))
                binds.append(.text(key.deviceID))
                binds.append(.integer(device.outcomes))
                binds.append(.integer(device.stage))
                binds.append(.float(device.first.timeIntervalSince1970))
                binds.append(.integer(Int((device.first.timeIntervalSince1970 / 3600).rounded(.down))))
                binds.append(.float(device.last.timeIntervalSince1970))
            }
            let statement = statements[part.count] ?? """
                INSERT INTO \(ReportTables.devices) (id, deployment_id, model, device_id, outcomes, stage, first_at, first_hour, last_at) VALUES \
                \(repeatElement("(?, ?, ?, ?, ?, ?, ?, ?, ?)", count: part.count).joined(separator: ", ")) \
                ON CONFLICT (deployment_id, model, device_id) \
                DO UPDATE SET outcomes = \(ReportTables.devices).outcomes | excluded.outcomes, last_at = \(ReportTables.laterLastAt)
                """
            statements[part.count] = statement
            _ = try await sqlite.query(statement, binds)
        }
    }
}
