import Foundation
import NIOConcurrencyHelpers

/// Device reports accepted and not yet written: the request path only takes a lock and adds them
/// (no database write per request); ``flush(on:now:)`` writes them every flush interval and at
/// shutdown.
///
/// Per deployment, model and device it keeps the set of outcomes reported (a bit each), merged
/// with the stored set by OR, so a retried report never counts twice, on any instance (the stored
/// set is replaced instead when the reports are the first made on a newer staged activation's
/// manifest: ``RolloutHealth``). The event
/// IDs this instance has seen recently answer a retry as a duplicate at once. Failures are also
/// kept as raw events (their reasons; the table is unique per app and event ID, so a retry that
/// reaches another instance is stored once too); the other outcomes say nothing the outcome set
/// does not, and are not stored one by one.
///
/// The buffer is shared by every team of the instance. So that one team's flood (many apps, each
/// within its own budgets) cannot keep every other team's reports out — their `failed` reports
/// are what halts a bad rollout — its last quarter (``reserve``) only takes a batch of a team whose
/// rows, with the batch's, stay within a quarter of it.
final class ReportBuffer: Sendable {
    /// A device row's key: a device, for one model of one deployment. Names are compared and hashed
    /// as bytes, as the database's unique index compares them: canonically equivalent spellings
    /// ("\u{212A}ite", "Kite") are two rows.
    struct DeviceKey: Hashable, Sendable {
        let deploymentID: UUID
        let model: String
        let deviceID: String

        static func == (left: DeviceKey, right: DeviceKey) -> Bool {
            left.deploymentID == right.deploymentID && left.model.hasSameBytes(as: right.model) && left.deviceID.hasSameBytes(as: right.deviceID)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(deploymentID)
            model.hashBytes(into: &hasher)
            deviceID.hashBytes(into: &hasher)
        }
    }

    struct DeviceState: Sendable {
        var outcomes: Int
        /// The stage (percent) the deployment was at when the device first reported.
        var stage: Int
        var first: Date
        var last: Date
        /// Per outcome (at its bit's position), the highest manifest sequence number a report of it
        /// named: which outcomes were reported on the manifest of the deployment's newest staged
        /// activation (``counted(since:)``).
        var sequences = SIMD4<Int64>()

        /// Adds an outcome reported at `at` on the manifest with sequence number `sequence` (`first`
        /// stays the time of the first report taken).
        mutating func merge(outcome bit: Int, at: Date, sequence: Int64) {
            outcomes |= bit
            last = max(last, at)
            let slot = bit.trailingZeroBitCount
            sequences[slot] = max(sequences[slot], sequence)
        }

        /// Adds what a later batch reported (`first` and `stage` stay this state's).
        mutating func merge(_ other: DeviceState) {
            outcomes |= other.outcomes
            last = max(last, other.last)
            sequences = pointwiseMax(sequences, other.sequences)
        }

        /// The outcomes a device row is written with, and the staged activation they count for
        /// (`report_devices.rollout_sequence`), given `since`, the start sequence of the deployment's
        /// newest one (0 without one): the outcomes reported on its manifest or a later one, counted
        /// for it; when there are none, every outcome, counted for none (0: from before it, which its
        /// gate does not count). Judged per outcome: a device whose failure on an earlier
        /// activation's manifest arrives late, in the same flush as its first report on the new one,
        /// does not have that failure counted against the new rollout.
        func counted(since: Int64) -> (outcomes: Int, rolloutSequence: Int64) {
            guard since > 0 else { return (outcomes, 0) }
            var current = 0
            for slot in 0..<sequences.scalarCount where outcomes & (1 << slot) != 0 && sequences[slot] >= since {
                current |= 1 << slot
            }
            return current == 0 ? (outcomes, 0) : (current, since)
        }
    }

    /// An accepted failure and who sent it.
    struct Event: Sendable {
        let appID: UUID
        let report: DeviceReport
        let failure: DeviceReport.Failure
        let receivedAt: Date
    }

    /// What waits for the next flush.
    struct Pending: Sendable {
        var devices: [DeviceKey: DeviceState] = [:]
        /// Failed outcomes, with their reasons.
        var events: [Event] = []
        /// The rows each team's batches added (a device row already pending is not counted again).
        var rowsByTeam: [UUID: Int] = [:]
        /// The team of each deployment with pending device rows (a deployment has one team).
        var teamOfDeployment: [UUID: UUID] = [:]

        /// Rows the next flush writes.
        var count: Int { devices.count + events.count }
    }

    /// The most rows (device outcome sets and failures) kept unwritten by default, as when the
    /// database is down: more are refused with 503. A team alone may fill three quarters of it:
    /// 105 000 rows.
    static let defaultCapacity = 140_000
    /// The smallest capacity the setting allows: its reserve (250 rows) and its first three
    /// quarters each still take whole batches of ``ReportBatch/maximumEvents`` (100).
    static let minimumCapacity = 1_000
    /// Event IDs remembered per generation; two generations are kept.
    static let remembered = 250_000

    private struct State {
        var pending = Pending()
        var seen = ReportEventKeyTable(capacity: ReportBuffer.remembered)
        var seenBefore = ReportEventKeyTable(capacity: ReportBuffer.remembered)
        /// The generation retired last, emptied, for the next: a fresh table's pages cost a fault
        /// each on first touch, once a second under load (3 % of the server's time in a profile).
        var spare: ReportEventKeyTable?
        var prunedAt = Date.distantPast
    }

    private let state = NIOLockedValueBox(State())
    /// The most rows kept unwritten.
    let capacity: Int
    /// The last rows of ``capacity``, taken only by a team that holds fewer than this many: a
    /// quarter.
    var reserve: Int { capacity / 4 }
    /// Rows that, found pending when a flush ends, start the next flush at once instead of after
    /// the flush interval: under load the backlog then stays near what one flush writes.
    var flushAtOnce: Int { min(10_000, capacity / 10) }

    /// What ``add(_:appID:teamID:stage:failureAllowance:now:)`` did with a batch.
    enum Outcome: Equatable {
        /// Added: how many events were new, and how many repeated an event ID already seen.
        case added(accepted: Int, duplicates: Int)
        /// Nothing added: the buffer is full.
        case full
        /// Nothing added: the batch would reach into the ``reserve`` and the team would hold more
        /// than a quarter of the buffer.
        case teamShare

        /// The counts when the batch was added.
        var counts: (accepted: Int, duplicates: Int)? {
            if case .added(let accepted, let duplicates) = self { (accepted, duplicates) } else { nil }
        }
    }

    /// A buffer of at most `capacity` rows (at least 4; the setting allows from
    /// ``minimumCapacity``).
    init(capacity: Int = ReportBuffer.defaultCapacity) {
        precondition(capacity >= 4)
        self.capacity = capacity
    }

    /// Adds `reports` of app `appID` of team `teamID`: how many were new and how many repeated an
    /// event ID already seen, or nothing added when the buffer is full or when the batch would
    /// reach into the ``reserve`` and the team would hold more than a quarter of the buffer.
    ///
    /// Everything that can be is done before the lock: each event ID's key, and the batch's events
    /// grouped by device (a batch is usually one device's, for one or two models), so that under
    /// the lock each event costs two lookups of a 16-byte key and each device one of its
    /// outcome set.
    func add(_ reports: [DeviceReport], appID: UUID, teamID: UUID, stage: (UUID) -> Int, now: Date = Date()) -> Outcome {
        var unlimited = Int.max
        return add(reports, appID: appID, teamID: teamID, stage: stage, failureAllowance: &unlimited, now: now)
    }

    /// ``add(_:appID:teamID:stage:now:)`` keeping at most `failureAllowance` failures as raw events
    /// (``ReportVolumeBudget``), less each one kept; every failure counts on its device all the same.
    func add(_ reports: [DeviceReport], appID: UUID, teamID: UUID, stage: (UUID) -> Int, failureAllowance: inout Int,
             now: Date = Date()) -> Outcome {
        // What the lock needs of each event, in arrays of plain values: reading them out of the
        // reports under the lock copied each report (five Strings retained and released).
        let keys = reports.map(\.eventKey)
        let bits = reports.map(\.outcome.bit)
        let times = reports.map(\.at)
        let sequences = reports.map(\.sequence)
        let groups = DeviceGroup.grouping(reports, stage: stage)
        var accepted = [Bool](repeating: false, count: reports.count)
        var retired: ReportEventKeyTable?
        let answer: Outcome = state.withLockedValue { state in
            let rowsBefore = state.pending.count
            guard rowsBefore + reports.count <= capacity else { return .full }
            let teamRows = state.pending.rowsByTeam[teamID] ?? 0
            if rowsBefore + reports.count > capacity - reserve, teamRows + reports.count > reserve { return .teamShare }
            var count = 0
            for index in keys.indices {
                let key = keys[index]
                guard !state.seenBefore.contains(key) else { continue }
                if state.seen.count >= Self.remembered, !state.seen.contains(key) {
                    // The oldest generation is emptied after the lock and kept as the spare.
                    retired = state.seenBefore
                    state.seenBefore = state.seen
                    state.seen = state.spare.take() ?? ReportEventKeyTable(capacity: Self.remembered)
                }
                // One probe: inserting says whether it was there.
                guard state.seen.insert(key) else { continue }
                accepted[index] = true
                count += 1
                if bits[index] == ReportOutcome.failed.bit, failureAllowance > 0, let failure = reports[index].failure {
                    failureAllowance -= 1
                    state.pending.events.append(Event(appID: appID, report: reports[index], failure: failure, receivedAt: now))
                }
            }
            for group in groups {
                var merged: DeviceState?
                for index in group.members where accepted[index] {
                    if merged == nil {
                        merged = DeviceState(outcomes: 0, stage: group.stage, first: times[index], last: times[index])
                    }
                    merged!.merge(outcome: bits[index], at: times[index], sequence: sequences[index])
                }
                guard let merged else { continue }
                // Changed in place: one hash of the key whether the device is new or not.
                let devicesBefore = state.pending.devices.count
                state.pending.devices[group.key, default: merged].merge(merged)
                if state.pending.devices.count > devicesBefore, state.pending.teamOfDeployment[group.key.deploymentID] == nil {
                    state.pending.teamOfDeployment[group.key.deploymentID] = teamID
                }
            }
            let added = state.pending.count - rowsBefore
            if added > 0 { state.pending.rowsByTeam[teamID] = teamRows + added }
            return .added(accepted: count, duplicates: reports.count - count)
        }
        if let retired {
            retired.removeAll()
            state.withLockedValue { $0.spare = retired }
        }
        return answer
    }

    /// The events of a batch that report on one device and model of one deployment.
    private struct DeviceGroup {
        let key: DeviceKey
        let stage: Int
        var members: [Int]

        /// `reports` grouped, in the order their first events come; `stage` asked once a deployment.
        static func grouping(_ reports: [DeviceReport], stage: (UUID) -> Int) -> [DeviceGroup] {
            var groups: [DeviceGroup] = []
            for index in reports.indices {
                // Field by field: reading a whole report out of the array copies it.
                let deploymentID = reports[index].deploymentID, model = reports[index].model, deviceID = reports[index].deviceID
                if let at = groups.firstIndex(where: {
                    $0.key.deploymentID == deploymentID && $0.key.model.hasSameBytes(as: model) && $0.key.deviceID.hasSameBytes(as: deviceID)
                }) {
                    groups[at].members.append(index)
                } else {
                    let known = groups.first { $0.key.deploymentID == deploymentID }?.stage
                    groups.append(DeviceGroup(key: DeviceKey(deploymentID: deploymentID, model: model, deviceID: deviceID),
                                              stage: known ?? stage(deploymentID), members: [index]))
                }
            }
            return groups
        }
    }

    /// Takes everything pending, leaving nothing.
    func take() -> Pending {
        state.withLockedValue { state in
            let taken = state.pending
            // Room for as many devices as the last interval had: growing from empty rehashed the
            // table several times an interval, each time under the lock every request takes.
            state.pending = Pending(devices: Dictionary(minimumCapacity: taken.devices.count))
            return taken
        }
    }

    /// Puts back what a failed flush took, merged with what arrived since: a device row that
    /// came again meanwhile is one row, counted once for its team.
    func restore(_ taken: Pending) {
        state.withLockedValue { state in
            for (key, device) in taken.devices {
                if var newer = state.pending.devices[key] {
                    if let team = taken.teamOfDeployment[key.deploymentID] ?? state.pending.teamOfDeployment[key.deploymentID] {
                        state.pending.rowsByTeam[team, default: 1] -= 1
                    }
                    newer.outcomes |= device.outcomes
                    newer.sequences = pointwiseMax(newer.sequences, device.sequences)
                    newer.stage = device.stage
                    newer.first = min(newer.first, device.first)
                    newer.last = max(newer.last, device.last)
                    state.pending.devices[key] = newer
                } else {
                    state.pending.devices[key] = device
                }
            }
            state.pending.events.insert(contentsOf: taken.events, at: 0)
            state.pending.rowsByTeam.merge(taken.rowsByTeam, uniquingKeysWith: +)
            state.pending.teamOfDeployment.merge(taken.teamOfDeployment) { newer, _ in newer }
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

    /// The rows waiting for the next flush.
    var pendingRows: Int { state.withLockedValue { $0.pending.count } }

    /// The rows waiting for the next flush that team `teamID`'s batches added.
    func pendingRows(of teamID: UUID) -> Int { state.withLockedValue { $0.pending.rowsByTeam[teamID] ?? 0 } }
}
