import Fluent
import Foundation
import SQLKit

/// How a deployment fares on the devices that reported about it, from `report_devices`: devices,
/// not events, so a device that reports twice counts once.
///
/// Counts are per staged activation: only the outcomes devices reported on the manifest a
/// deployment's newest staged activation started with, or a later one (`since`, its
/// ``RolloutRecord/startSequence``; 0 for a deployment never staged: every report). A row's outcomes
/// are a merged set of bits, so no time or filter can take an earlier rollout's `failed` out of it
/// afterwards: each row says which activation its outcomes belong to (`rollout_sequence`), and a
/// flush that brings a report made on a newer activation's manifest replaces the row's earlier
/// outcomes instead of adding to them (``ReportBuffer/flush(on:retention:now:)``). The rows stay,
/// so the adoption chart keeps every device's first report.
///
/// Starting afresh by deleting the deployment's rows when a staged activation starts was the other
/// way: one transaction, but it would hold the collection's lock (and, on SQLite, every writer)
/// through a delete of up to a row per device the deployment ever had, empty the adoption chart's
/// past hours, and still count reports made on the old manifest that arrive later (a device's
/// queue, or an instance's unwritten buffer).
struct RolloutHealth: Codable, Sendable, Equatable {
    /// One model's devices.
    struct Model: Codable, Sendable, Equatable {
        let model: String
        /// Devices that reported anything about the model.
        let devices: Int
        /// Of those, devices that reported it failed.
        let failed: Int
        /// failed / devices in percent (0 with no devices).
        var failureRate: Double { devices == 0 ? 0 : Double(failed) * 100 / Double(devices) }
    }

    /// Devices that reported anything about the deployment.
    let devices: Int
    /// Devices by outcome reported (for any model).
    let outcomes: [String: Int]
    let models: [Model]

    /// The model with the highest failure rate among those with at least `minReports` devices.
    func worst(minReports: Int) -> Model? {
        models.filter { $0.devices >= minReports }.max { ($0.failureRate, $1.model) < ($1.failureRate, $0.model) }
    }

    /// Reads the counts of `deploymentID` from its staged activation that started with sequence
    /// number `since` (its ``RolloutRecord/startSequence``; 0: every report).
    static func load(_ deploymentID: UUID, since: Int64, on db: any Database) async throws -> RolloutHealth {
        guard let sql = db as? any SQLDatabase else { return RolloutHealth(devices: 0, outcomes: [:], models: []) }
        let models = try await sql.raw("""
            SELECT model, COUNT(*) AS devices, SUM(CASE WHEN (outcomes & 8) <> 0 THEN 1 ELSE 0 END) AS failed \
            FROM report_devices WHERE deployment_id = \(bind: deploymentID) AND rollout_sequence >= \(bind: since) \
            GROUP BY model ORDER BY model
            """).all().map {
            Model(model: try $0.decode(column: "model", as: String.self), devices: Int(try $0.decode(column: "devices", as: Int64.self)),
                  failed: Int(try $0.decode(column: "failed", as: Int64.self)))
        }
        let columns = ReportOutcome.allCases.map { "COUNT(DISTINCT CASE WHEN (outcomes & \($0.bit)) <> 0 THEN device_id END) AS \($0.rawValue)" }
        guard let row = try await sql.raw("""
            SELECT COUNT(DISTINCT device_id) AS devices, \(unsafeRaw: columns.joined(separator: ", ")) \
            FROM report_devices WHERE deployment_id = \(bind: deploymentID) AND rollout_sequence >= \(bind: since)
            """).first()
        else { return RolloutHealth(devices: 0, outcomes: [:], models: models) }
        var outcomes: [String: Int] = [:]
        for outcome in ReportOutcome.allCases {
            outcomes[outcome.rawValue] = Int(try row.decode(column: outcome.rawValue, as: Int64.self))
        }
        return RolloutHealth(devices: Int(try row.decode(column: "devices", as: Int64.self)), outcomes: outcomes, models: models)
    }

    /// The most frequent failure reasons of the deployment's raw events still kept, of those
    /// reported on a manifest with sequence number `since` or later (as ``load(_:since:on:)``).
    static func topReasons(_ deploymentID: UUID, since: Int64, limit: Int = 5, on db: any Database) async throws -> [(reason: String, count: Int)] {
        guard let sql = db as? any SQLDatabase else { return [] }
        return try await sql.raw("""
            SELECT reason, COUNT(*) AS n FROM report_events \
            WHERE deployment_id = \(bind: deploymentID) AND sequence >= \(bind: since) AND outcome = 'failed' AND reason IS NOT NULL \
            GROUP BY reason ORDER BY n DESC, reason LIMIT \(bind: limit)
            """).all().map { (try $0.decode(column: "reason", as: String.self), Int(try $0.decode(column: "n", as: Int64.self))) }
    }
}
