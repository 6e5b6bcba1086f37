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
    /// A device row's outcomes on conflict (``RolloutHealth``): a newer staged activation's replace
    /// the row's (which the new rollout's gate must not count), one activation's are merged by OR,
    /// and an older one's (a report made on a manifest from before the row's) are left out.
    static let mergedOutcomes = """
        CASE WHEN excluded.rollout_sequence > \(devices).rollout_sequence THEN excluded.outcomes \
        WHEN excluded.rollout_sequence = \(devices).rollout_sequence THEN \(devices).outcomes | excluded.outcomes \
        ELSE \(devices).outcomes END
        """
    /// A device row's stage on conflict: the stage at its first report for the row's activation.
    static let newerStage = "CASE WHEN excluded.rollout_sequence > \(devices).rollout_sequence THEN excluded.stage ELSE \(devices).stage END"
    /// A device row's activation on conflict: the newer of the two.
    static let newerRolloutSequence = """
        CASE WHEN excluded.rollout_sequence > \(devices).rollout_sequence THEN excluded.rollout_sequence \
        ELSE \(devices).rollout_sequence END
        """
    /// The `DO UPDATE SET` of a device row's upsert (every expression reads the row as it was).
    static let deviceUpdates = "outcomes = \(mergedOutcomes), stage = \(newerStage), rollout_sequence = \(newerRolloutSequence), "
        + "last_at = \(laterLastAt)"
}

extension ReportBuffer {
    /// Writes what is pending in one transaction: each device's outcome set merged by OR into
    /// `report_devices` (within one staged activation: ``ReportTables/mergedOutcomes``), and the
    /// failures into `report_events` (an event ID already stored is
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
                    // Where each deployment's counts start (``RolloutHealth``). Read in this
                    // transaction, after the reports were taken: a report made on a staged
                    // activation's manifest came after that activation committed, so the read sees
                    // it, on any instance.
                    let starts = try await Rollouts.startSequences(of: touched, on: sql)
                    try await Self.writeDevices(pending.devices, starts: starts, ids: &ids, on: sql)
                    try await Self.writeEvents(pending.events, starts: starts, ids: &ids, on: sql)
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

    /// Writes device rows, each with the staged activation its outcomes count for: from `starts`,
    /// the start sequence of each deployment's newest one (``DeviceState/counted(since:)``).
    private static func writeDevices(_ devices: [DeviceKey: DeviceState], starts: [UUID: Int64], ids: inout ReportRowIDs,
                                     on sql: any SQLDatabase) async throws {
        let rows = Array(devices)
        if sql.dialect.name == "postgresql" { return try await writeDevicesInArrays(lockOrdered(rows), starts: starts, ids: &ids, on: sql) }
        if let sqlite = sql as? any SQLiteDatabase { return try await writeDevices(rows, starts: starts, ids: &ids, on: sqlite) }
        for start in stride(from: 0, to: rows.count, by: 500) {
            let insert = sql.insert(into: ReportTables.devices)
                .columns("id", "deployment_id", "model", "device_id", "outcomes", "stage", "first_at", "first_hour", "last_at", "rollout_sequence")
            for (key, device) in rows[start..<min(start + 500, rows.count)] {
                let counted = device.counted(since: starts[key.deploymentID] ?? 0)
                insert.values(SQLBind(ids.next()), SQLBind(key.deploymentID), SQLBind(key.model), SQLBind(key.deviceID),
                              SQLBind(counted.outcomes), SQLBind(device.stage), SQLBind(device.first),
                              SQLBind(Int64((device.first.timeIntervalSince1970 / 3600).rounded(.down))), SQLBind(device.last),
                              SQLBind(counted.rolloutSequence))
            }
            try await insert.onConflict(with: ["deployment_id", "model", "device_id"]) {
                $0.set("outcomes", to: SQLRaw(ReportTables.mergedOutcomes))
                    .set("stage", to: SQLRaw(ReportTables.newerStage))
                    .set("rollout_sequence", to: SQLRaw(ReportTables.newerRolloutSequence))
                    .set("last_at", to: SQLRaw(ReportTables.laterLastAt))
            }.run()
        }
    }

    /// Writes the failures kept as raw events, each with the sequence number of the manifest it was
    /// reported on, at most the start of its deployment's newest staged activation (`starts`; 0
    /// without one): the top reasons of a rollout are those at its start or later
    /// (``RolloutHealth/topReasons(_:since:limit:on:)``), and the sequence is the device's claim —
    /// one claiming a sequence no manifest had yet would otherwise show its reasons among those of
    /// every later rollout of the deployment.
    private static func writeEvents(_ events: [Event], starts: [UUID: Int64], ids: inout ReportRowIDs, on sql: any SQLDatabase) async throws {
        let events = sql.dialect.name == "postgresql" ? lockOrdered(events) : events
        for start in stride(from: 0, to: events.count, by: 500) {
            let insert = sql.insert(into: ReportTables.events)
                .columns("id", "app_id", "event_id", "deployment_id", "model", "device_id", "outcome", "reason", "sequence", "at", "received_at")
            for event in events[start..<min(start + 500, events.count)] {
                let report = event.report
                insert.values(SQLBind(ids.next()), SQLBind(event.appID), SQLBind(event.failure.eventID), SQLBind(report.deploymentID),
                              SQLBind(report.model), SQLBind(report.deviceID), SQLBind(report.outcome.rawValue), SQLBind(event.failure.reason),
                              SQLBind(min(report.sequence, starts[report.deploymentID] ?? 0)), SQLBind(report.at), SQLBind(event.receivedAt))
            }
            try await insert.ignoringConflicts(with: ["app_id", "event_id"]).run()
        }
    }

    /// PostgreSQL: each column bound as one array and the rows made by `unnest`, 5 000 rows a
    /// statement. A `VALUES` list of 500 rows (4 500 parameters, each encoded and sent on its own)
    /// fell behind devices at ~13 000 batches a second and the buffer filled up (503).
    private static func writeDevicesInArrays(_ rows: [(key: DeviceKey, value: DeviceState)], starts: [UUID: Int64], ids: inout ReportRowIDs,
                                             on sql: any SQLDatabase) async throws {
        for start in stride(from: 0, to: rows.count, by: 5000) {
            let part = rows[start..<min(start + 5000, rows.count)]
            var keys: [UUID] = [], deployments: [UUID] = [], models: [String] = [], devices: [String] = []
            var outcomes: [Int] = [], stages: [Int] = [], firsts: [Date] = [], hours: [Int64] = [], lasts: [Date] = []
            var rollouts: [Int64] = []
            for (key, device) in part {
                let counted = device.counted(since: starts[key.deploymentID] ?? 0)
                keys.append(ids.next())
                deployments.append(key.deploymentID)
                models.append(key.model)
                devices.append(key.deviceID)
                outcomes.append(counted.outcomes)
                stages.append(device.stage)
                firsts.append(device.first)
                hours.append(Int64((device.first.timeIntervalSince1970 / 3600).rounded(.down)))
                lasts.append(device.last)
                rollouts.append(counted.rolloutSequence)
            }
            let table = SQLIdentifier(ReportTables.devices)
            try await sql.raw("""
                INSERT INTO \(table) (id, deployment_id, model, device_id, outcomes, stage, first_at, first_hour, last_at, rollout_sequence)
                SELECT * FROM unnest(\(bind: keys)::uuid[], \(bind: deployments)::uuid[], \(bind: models)::text[], \(bind: devices)::text[],
                                     \(bind: outcomes)::bigint[], \(bind: stages)::bigint[], \(bind: firsts)::timestamptz[],
                                     \(bind: hours)::bigint[], \(bind: lasts)::timestamptz[], \(bind: rollouts)::bigint[])
                ON CONFLICT (deployment_id, model, device_id)
                DO UPDATE SET \(unsafeRaw: ReportTables.deviceUpdates)
                """).run()
        }
    }

    /// SQLite: the statement's text made once per size and the values bound as SQLite's own
    /// (UUIDs as the uppercase text Fluent writes, times as seconds since 1970). Building each
    /// statement through SQLKit, every value encoded through `Encodable`
    /// and every UUID formatted with `snprintf`, was a third of a flush's CPU. 3 000 rows a
    /// statement (30 000 parameters; SQLite takes up to 32 766): each statement's answer comes
    /// back through an event loop busy with devices, and with 500 rows a statement those waits
    /// made a flush of 25 000 rows last two seconds while the buffer filled (503).
    private static func writeDevices(_ rows: [(key: DeviceKey, value: DeviceState)], starts: [UUID: Int64], ids: inout ReportRowIDs,
                                     on sqlite: any SQLiteDatabase) async throws {
        var statements: [Int: String] = [:]
        for start in stride(from: 0, to: rows.count, by: 3000) {
            let part = rows[start..<min(start + 3000, rows.count)]
            var binds: [SQLiteData] = []
            binds.reserveCapacity(part.count * 10)
            for (key, device) in part {
                let counted = device.counted(since: starts[key.deploymentID] ?? 0)
                binds.append(.text(ids.next().uppercaseHexText))
                binds.append(.text(key.deploymentID.uppercaseHexText))
                binds.append(.text(key.model))
                binds.append(.text(key.deviceID))
                binds.append(.integer(counted.outcomes))
                binds.append(.integer(device.stage))
                binds.append(.float(device.first.timeIntervalSince1970))
                binds.append(.integer(Int((device.first.timeIntervalSince1970 / 3600).rounded(.down))))
                binds.append(.float(device.last.timeIntervalSince1970))
                binds.append(.integer(Int(counted.rolloutSequence)))
            }
            let statement = statements[part.count] ?? """
                INSERT INTO \(ReportTables.devices) \
                (id, deployment_id, model, device_id, outcomes, stage, first_at, first_hour, last_at, rollout_sequence) VALUES \
                \(repeatElement("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: part.count).joined(separator: ", ")) \
                ON CONFLICT (deployment_id, model, device_id) \
                DO UPDATE SET \(ReportTables.deviceUpdates)
                """
            statements[part.count] = statement
            _ = try await sqlite.query(statement, binds)
        }
    }
}
