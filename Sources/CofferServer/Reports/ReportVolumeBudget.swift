import Foundation
import NIOConcurrencyHelpers

/// What one app's reports may add to the database in an hour, on this instance: new device rows
/// and stored failure events.
///
/// Device IDs are the app's choice, so a holder of one extracted app credential can invent them:
/// each new (deployment, model, device) is a `report_devices` row kept for good, and each failure
/// a `report_events` row kept for the retention. Within the per-app batch budget that was up to
/// 600 000 of each a minute, filling the disk every team shares. Per clock hour and app:
///
/// - **device rows**: a batch that would bring more (deployment, model, device) triples than
///   ``deviceRows`` that this instance has not seen from the app this hour is refused whole (429,
///   `Retry-After` the rest of the hour; the SDK keeps its reports queued and retries). Triples
///   already seen this hour pass, so the devices already counted keep reporting.
/// - **failure events**: past ``failures`` the failures still count on their devices (the rollout
///   gate reads those), but their reasons are no longer stored one by one.
///
/// The triples are kept as 64-bit hashes (seeded per process), at most ``deviceRows`` per app:
/// about 8 bytes and a slot each. A fresh hour starts empty.
final class ReportVolumeBudget: Sendable {
    /// New device rows per app per hour (COFFER_REPORT_DEVICES_PER_APP_PER_HOUR).
    let deviceRows: Int
    /// Failure events stored per app per hour (COFFER_REPORT_FAILURES_PER_APP_PER_HOUR).
    let failures: Int

    private struct Window {
        var hour: Int64
        var rows: Set<Int> = []
        var failures = 0
    }

    private struct State {
        /// `appID`'s window for `hour`; the first call of an hour drops the earlier hours' windows
        /// (apps that stopped reporting do not keep their hashes).
        mutating func window(_ appID: UUID, hour: Int64) -> Window {
            if swept < hour {
                windows = windows.filter { $0.value.hour >= hour }
                swept = hour
            }
            return windows[appID].flatMap { $0.hour == hour ? $0 : nil } ?? Window(hour: hour)
        }

        var windows: [UUID: Window] = [:]
        /// The hour whose start last dropped every earlier hour's windows.
        var swept: Int64 = 0
    }

    private let state = NIOLockedValueBox(State())

    init(deviceRows: Int, failures: Int) {
        self.deviceRows = deviceRows
        self.failures = failures
    }

    /// Counts `reports`' device rows for `appID`; nil when they fit, else the seconds until the
    /// hour ends (nothing is counted then).
    func admitRows(_ reports: [DeviceReport], appID: UUID, now: Date) -> Int? {
        var hashes: [Int] = []
        hashes.reserveCapacity(reports.count)
        for index in reports.indices {
            var hasher = Hasher()
            hasher.combine(reports[index].deploymentID)
            hasher.combine(reports[index].model)
            hasher.combine(reports[index].deviceID)
            hashes.append(hasher.finalize())
        }
        let hour = Self.hour(now)
        return state.withLockedValue { state in
            var window = state.window(appID, hour: hour)
            var fresh = 0
            var counted: Set<Int> = []
            for hash in hashes where !window.rows.contains(hash) && counted.insert(hash).inserted { fresh += 1 }
            guard fresh <= deviceRows - window.rows.count else { return Self.secondsLeft(in: hour, now: now) }
            window.rows.formUnion(counted)
            state.windows[appID] = window
            return nil
        }
    }

    /// How many of `wanted` failure events of `appID` may be stored now; counts them.
    func storableFailures(_ wanted: Int, appID: UUID, now: Date) -> Int {
        guard wanted > 0 else { return 0 }
        let hour = Self.hour(now)
        return state.withLockedValue { state in
            var window = state.window(appID, hour: hour)
            let allowed = min(wanted, max(0, failures - window.failures))
            window.failures += allowed
            state.windows[appID] = window
            return allowed
        }
    }

    private static func hour(_ now: Date) -> Int64 { Int64((now.timeIntervalSince1970 / 3600).rounded(.down)) }

    private static func secondsLeft(in hour: Int64, now: Date) -> Int {
        max(1, Int((Double(hour + 1) * 3600 - now.timeIntervalSince1970).rounded(.up)))
    }
}
