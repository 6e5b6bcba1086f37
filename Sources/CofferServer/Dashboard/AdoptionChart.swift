import Fluent
import Foundation
import SQLKit

/// The collection page's adoption chart: devices that first reported about each deployment, per
/// hour (UTC), over the last two days, stacked by deployment (from `report_devices`).
enum AdoptionChart {
    static let hours = 48

    static func make(collection: CollectionRecord, now: Date = Date(), on db: any Database) async throws -> BarChart {
        let current = Int((now.timeIntervalSince1970 / 3600).rounded(.down))
        let first = current - hours + 1
        let slots = (first...current).map { hour in
            BarChart.Slot(id: hour, label: Self.label(hour), text: Self.text(hour))
        }
        let deployments = try await DeploymentRecord.query(on: db).filter(\.$collection.$id == collection.requireID()).all()
        let names = Dictionary(uniqueKeysWithValues: try deployments.map { (try $0.requireID(), $0.name) })
        var series: [UUID: [Int: Int64]] = [:]
        if let sql = db as? any SQLDatabase, !names.isEmpty {
            let rows = try await sql.raw("""
                SELECT deployment_id, first_hour, COUNT(DISTINCT device_id) AS devices FROM report_devices \
                WHERE deployment_id IN (\(binds: Array(names.keys))) AND first_hour >= \(bind: Int64(first)) \
                GROUP BY deployment_id, first_hour
                """).all()
            for row in rows {
                let deployment = try row.decode(column: "deployment_id", as: UUID.self)
                let hour = Int(try row.decode(column: "first_hour", as: Int64.self))
                series[deployment, default: [:]][hour, default: 0] += try row.decode(column: "devices", as: Int64.self)
            }
        }
        return BarChart.stacked(
            id: "adoption", heading: "Adoption: devices reporting a deployment for the first time", unit: "devices", slots: slots,
            slotName: "hour", slotHeading: "Hour (UTC)",
            series: series.map { BarChart.SlotSeries(label: names[$0.key] ?? "?", counts: $0.value) },
            otherLabel: "Other deployments", emptyText: "No device reports in the last two days.",
            emptyNote: "Devices appear here when they report a deployment's models (downloaded, opened, loaded or failed; docs/ROLLOUTS.md).")
    }

    /// `Nov 24 08h`.
    static func label(_ hour: Int) -> String {
        let day = UsageDay(number: hour / 24)
        return BarChart.display(day) + " " + String(format: "%02dh", hour % 24)
    }

    /// `2026-11-24 08:00`.
    static func text(_ hour: Int) -> String {
        UsageDay(number: hour / 24).text + String(format: " %02d:00", hour % 24)
    }
}
