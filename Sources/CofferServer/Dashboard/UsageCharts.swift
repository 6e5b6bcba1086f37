import Fluent
import Foundation

/// The activity page's two charts, from `usage_daily`: downloads per model version per day, and
/// key deliveries per day, for one team.
///
/// Downloads are counted per blob (the bytes a device fetched; ``UsageKind/download``). A team's
/// model versions name their blobs, so a version shows its blob's downloads; two versions with
/// the same bytes share one series.
enum UsageCharts {
    static func make(team: TeamRecord, days: [UsageDay], on db: any Database) async throws -> [BarChart] {
        guard let first = days.first, let last = days.last else { return [] }
        let teamID = try team.requireID()
        let collections = try await CollectionRecord.query(on: db).filter(\.$team.$id == teamID).all()
        let names = Dictionary(uniqueKeysWithValues: try collections.map { (try $0.requireID(), $0.identifier) })
        let versions = names.isEmpty ? [] : try await ModelVersionRecord.query(on: db).filter(\.$collection.$id ~~ Array(names.keys)).all()
        var labels: [String: [String]] = [:]
        for version in versions {
            labels[version.blobID, default: []].append("\(names[version.$collection.id] ?? "?") / \(version.modelName) · \(version.blobID.prefix(8))")
        }
        let downloads = try await counts(.download, subjects: Array(labels.keys), from: first, to: last, on: db)
        let downloadSeries = downloads.map { blob, perDay in
            let all = (labels[blob] ?? [String(blob.prefix(8))]).sorted()
            return BarChart.Series(label: all[0] + (all.count > 1 ? " (+\(all.count - 1))" : ""), counts: perDay)
        }
        let keyIDs = try await KeyRecord.query(on: db).filter(\.$team.$id == teamID).all().compactMap(\.id)
        var deliveries: [UsageDay: Int64] = [:]
        for (_, perDay) in try await counts(.keyDelivery, subjects: keyIDs, from: first, to: last, on: db) {
            for (day, count) in perDay { deliveries[day, default: 0] += count }
        }
        return [
            BarChart.stacked(id: "downloads", heading: "Downloads per model version", unit: "downloads", days: days, series: downloadSeries,
                             otherLabel: "Other versions", emptyText: "No model downloads in these days."),
            BarChart.stacked(id: "deliveries", heading: "Key deliveries", unit: "key deliveries", days: days,
                             series: deliveries.isEmpty ? [] : [.init(label: "Key deliveries", counts: deliveries)],
                             otherLabel: "Other", emptyText: "No keys delivered to devices in these days."),
        ]
    }

    /// Counts per subject and day, for subjects in `subjects` (queried in pieces of 500).
    private static func counts(_ kind: UsageKind, subjects: [String], from: UsageDay, to: UsageDay, on db: any Database) async throws -> [String: [UsageDay: Int64]] {
        var result: [String: [UsageDay: Int64]] = [:]
        for start in stride(from: 0, to: subjects.count, by: 500) {
            let piece = Array(subjects[start..<min(start + 500, subjects.count)])
            let rows = try await UsageDailyRecord.query(on: db).filter(\.$kind == kind.rawValue).filter(\.$subject ~~ piece)
                .filter(\.$day >= from.text).filter(\.$day <= to.text).all()
            for row in rows {
                guard let day = UsageDay(row.day) else { continue }
                result[row.subject, default: [:]][day, default: 0] += row.count
            }
        }
        return result
    }
}
