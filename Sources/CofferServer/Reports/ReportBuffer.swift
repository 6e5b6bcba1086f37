import Foundation
import NIOConcurrencyHelpers

/// Device reports accepted and not yet written: the request path only takes a lock and adds them
/// (no database write per request); ``flush(on:now:)`` writes them every flush interval and at
/// shutdown.
///
/// Per deployment, model and device it keeps the set of outcomes reported (a bit each), merged
/// with the stored set by OR, so a retried report never counts twice, on any instance. The event
/// IDs this instance has seen recently answer a retry as a duplicate at once. Failures are also
/// kept as raw events (their reasons; the table is unique per app and event ID, so a retry that
/// reaches another instance is stored once too); the other outcomes say nothing the outcome set
/// does not, and are not stored one by one.
final class ReportBuffer: Sendable {
    /// A device's outcomes for one model of one deployment.
    struct DeviceKey: Hashable, Sendable {
        let deploymentID: UUID
        let model: String
        let deviceID: String
    }

    struct DeviceState: Sendable {
        var outcomes: Int
        /// The stage (percent) the deployment was at when the device first reported.
        var stage: Int
        var first: Date
        var last: Date

        /// Adds an outcome reported at `at` (`first` stays the time of the first report taken).
        mutating func merge(outcome bit: Int, at: Date) {
            outcomes |= bit
            last = max(last, at)
        }
    }

    /// An accepted event and who sent it.
    struct Event: Sendable {
        let appID: UUID
        let report: DeviceReport
        let receivedAt: Date
    }

    /// What waits for the next flush.
    struct Pending: Sendable {
        var devices: [DeviceKey: DeviceState] = [:]
        /// Failed outcomes, with their reasons.
        var events: [Event] = []

        /// Rows the next flush writes.
        var count: Int { devices.count + events.count }
    }

    /// The most rows (device outcome sets and failures) kept unwritten, as when the database is
    /// down: more are refused with 503.
    static let capacity = 100_000
    /// Event IDs remembered per generation; two generations are kept.
    static let remembered = 250_000

    /// An event ID of an app.
    private struct SeenKey: Hashable {
        let appID: UUID
        let eventID: String
    }

    private struct State {
        var pending = Pending()
        var seen: Set<SeenKey> = []
        var seenBefore: Set<SeenKey> = []
        var prunedAt = Date.distantPast
    }

    private let state = NIOLockedValueBox(State())

    init() {}

    /// Adds `reports` of app `appID`; returns how many were new and how many repeated an event ID
    /// already seen, or nil (nothing added) when the buffer is full.
    func add(_ reports: [DeviceReport], appID: UUID, stage: (UUID) -> Int, now: Date = Date()) -> (accepted: Int, duplicates: Int)? {
        let stages = Dictionary(Set(reports.map(\.deploymentID)).map { ($0, stage($0)) }, uniquingKeysWith: { first, _ in first })
        var retired: Set<SeenKey> = []
        let answer: (accepted: Int, duplicates: Int)? = state.withLockedValue { state in
            guard state.pending.count + reports.count <= Self.capacity else { return nil }
            var accepted = 0
            for report in reports {
                let seenKey = SeenKey(appID: appID, eventID: report.eventID)
                guard !state.seenBefore.contains(seenKey) else { continue }
                if state.seen.count >= Self.remembered, !state.seen.contains(seenKey) {
                    // The oldest generation is freed after the lock, on another thread, and the new one
                    // has its room from the start: a quarter of a million event IDs freed, or rehashed
                    // while the set grows, under the lock took milliseconds from every request behind it.
                    retired = state.seenBefore
                    state.seenBefore = state.seen
                    state.seen = Set(minimumCapacity: Self.remembered)
                }
                // One hash of the key: inserting says whether it was there.
                guard state.seen.insert(seenKey).inserted else { continue }
                accepted += 1
                if report.outcome == .failed { state.pending.events.append(Event(appID: appID, report: report, receivedAt: now)) }
                let key = DeviceKey(deploymentID: report.deploymentID, model: report.model, deviceID: report.deviceID)
                let stage = stages[report.deploymentID] ?? 100
                // Changed in place: one hash of the key whether the device is new or not.
                state.pending.devices[key, default: DeviceState(outcomes: 0, stage: stage, first: report.at, last: report.at)]
                    .merge(outcome: report.outcome.bit, at: report.at)
            }
            return (accepted, reports.count - accepted)
        }
        if !retired.isEmpty {
            let released = retired
            retired = []
            DispatchQueue.global(qos: .utility).async { withExtendedLifetime(released) {} }
        }
        return answer
    }

    /// Takes everything pending, leaving nothing.
    func take() -> Pending {
        state.withLockedValue { state in
            defer { state.pending = Pending() }
            return state.pending
        }
    }

    /// Puts back what a failed flush took, merged with what arrived since.
    func restore(_ taken: Pending) {
        state.withLockedValue { state in
            for (key, device) in taken.devices {
                if var newer = state.pending.devices[key] {
                    newer.outcomes |= device.outcomes
                    newer.stage = device.stage
                    newer.first = min(newer.first, device.first)
                    newer.last = max(newer.last, device.last)
                    state.pending.devices[key] = newer
                } else {
                    state.pending.devices[key] = device
                }
            }
            state.pending.events.insert(contentsOf: taken.events, at: 0)
        }
    }

    /// Whether raw events should be pruned now (at most once a minute); records that they are.
    func prunesNow(_ now: Date) -> Bool {
        state.withLockedValue { state in
            guard now.timeIntervalSince(state.prunedAt) >= 60 else { return false }
            state.prunedAt = now
            return true
        }
    }

    /// The rows waiting for the next flush (for tests).
    var pendingRows: Int { state.withLockedValue { $0.pending.count } }
}
