import Foundation
import NIOConcurrencyHelpers

/// What one app's reports may add to the database, on this instance: device rows and stored
/// failure events.
///
/// Device IDs are the app's choice, so a holder of one extracted app credential can invent them:
/// each new (deployment, model, device) is a `report_devices` row kept for good, and each failure
/// a `report_events` row kept for the retention. Within the per-app batch budget that was up to
/// 600 000 of each a minute, filling the disk every team shares. Per app:
///
/// - **devices**: each (deployment, model, device) triple not yet seen from the app in this clock
///   hour takes a token from a bucket of ``deviceRows`` that refills evenly over an hour. A batch
///   that needs more tokens than are left is refused whole (429, `Retry-After` the seconds until
///   enough have come back; the SDK keeps its reports queued and retries); triples already seen
///   this hour take none, so devices already counted keep reporting. A flood that empties the
///   bucket holds real new devices back for seconds to minutes, not for the rest of an hour.
/// - **failure events**: past ``failures`` in a clock hour the failures still count on their
///   devices (the rollout gate reads those), but their reasons are no longer stored one by one.
///
/// Triples are compared by their bytes (as the database compares them; a canonically equivalent
/// spelling is another row) and kept as 64-bit hashes, seeded per process, for the current clock
/// hour: a bucket's worth plus an hour's refill, at most 2 × ``deviceRows`` per app (each hour
/// starts with a full bucket).
final class ReportVolumeBudget: Sendable {
    /// Device triples per app per hour (COFFER_REPORT_DEVICES_PER_APP_PER_HOUR, at least 100: a
    /// batch holds up to 100).
    let deviceRows: Int
    /// Failure events stored per app per clock hour (COFFER_REPORT_FAILURES_PER_APP_PER_HOUR).
    let failures: Int

    private struct Window {
        var rows: Set<Int> = []
        var failures = 0
        /// Device tokens left, as of `refilled`.
        var tokens: Double
        var refilled: Date

        /// Takes a token for each hash not seen this hour, or none and returns the seconds to wait.
        mutating func admit(_ hashes: [Int], capacity: Double, perSecond: Double, now: Date) -> Int? {
            tokens = min(capacity, tokens + max(0, now.timeIntervalSince(refilled)) * perSecond)
            refilled = max(refilled, now)
            var fresh: [Int] = []
            for hash in hashes where !rows.contains(hash) && !fresh.contains(hash) { fresh.append(hash) }
            let needed = Double(fresh.count)
            guard needed <= tokens else {
                guard needed <= capacity else { return 3600 }
                return Int(min(3600, max(1, ((needed - tokens) / perSecond).rounded(.up))))
            }
            tokens -= needed
            for hash in fresh { rows.insert(hash) }
            return nil
        }
    }

    private struct State {
        /// Each app's window of the current hour.
        var windows: [UUID: Window] = [:]
        /// The latest hour seen.
        var hour: Int64 = 0

        /// Moves to `now`'s hour, never back (a request that took its time late in the previous
        /// hour cannot bring that hour back): the first call of an hour drops every window, so
        /// apps that stopped reporting do not keep their hashes.
        mutating func open(_ now: Date) {
            let current = Int64((now.timeIntervalSince1970 / 3600).rounded(.down))
            guard current > hour else { return }
            windows.removeAll()
            hour = current
        }
    }

    private let state = NIOLockedValueBox(State())

    init(deviceRows: Int, failures: Int) {
        self.deviceRows = max(1, deviceRows)
        self.failures = failures
    }

    /// Counts `reports`' device triples for `appID`; nil when they fit, else the seconds until
    /// they would (nothing is counted then).
    func admitRows(_ reports: [DeviceReport], appID: UUID, now: Date) -> Int? {
        var hashes: [Int] = []
        hashes.reserveCapacity(reports.count)
        for index in reports.indices {
            // A batch is usually one device's events for a model or two, in runs: an event naming
            // the triple of the one before takes its hash (``Window/admit`` counts a triple once).
            if index > 0, let last = hashes.last, Self.sameTriple(reports[index], reports[index - 1]) {
                hashes.append(last)
                continue
            }
            var hasher = Hasher()
            hasher.combine(reports[index].deploymentID)
            reports[index].model.hashBytes(into: &hasher)
            reports[index].deviceID.hashBytes(into: &hasher)
            hashes.append(hasher.finalize())
        }
        let capacity = Double(deviceRows)
        let perSecond = capacity / 3600
        return state.withLockedValue { state in
            state.open(now)
            // Changed in place (a copy of the window would copy its set for every batch).
            return state.windows[appID, default: Window(tokens: capacity, refilled: now)].admit(
                hashes, capacity: capacity, perSecond: perSecond, now: now)
        }
    }

    /// How many of `wanted` failure events of `appID` may be stored now; counts them.
    func storableFailures(_ wanted: Int, appID: UUID, now: Date) -> Int {
        guard wanted > 0 else { return 0 }
        let capacity = Double(deviceRows)
        return state.withLockedValue { state in
            state.open(now)
            let used = state.windows[appID]?.failures ?? 0
            let allowed = min(wanted, max(0, failures - used))
            state.windows[appID, default: Window(tokens: capacity, refilled: now)].failures += allowed
            return allowed
        }
    }

    /// Gives back failure events counted by ``storableFailures(_:appID:now:)`` that were not
    /// stored (duplicates, a full buffer).
    func refundFailures(_ count: Int, appID: UUID) {
        guard count > 0 else { return }
        state.withLockedValue { state in
            if let used = state.windows[appID]?.failures { state.windows[appID]?.failures = max(0, used - count) }
        }
    }

    /// Whether two reports name the same (deployment, model, device), byte for byte.
    private static func sameTriple(_ one: DeviceReport, _ other: DeviceReport) -> Bool {
        one.deploymentID == other.deploymentID && one.model.hasSameBytes(as: other.model) && one.deviceID.hasSameBytes(as: other.deviceID)
    }
}
