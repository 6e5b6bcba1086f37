import Fluent
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// Audits refusals of device requests (key deliveries, manifests) without letting a flood of them
/// grow the database: identical refusals within a minute are one audit row whose `repeat_count`
/// says how many there were. Each team (and refusals of no team, such as made-up credentials)
/// writes at most ``maximumRowsPerTeamPerMinute`` rows a minute, the last an `audit.suppressed`
/// row of that team counting the rest, so that one team, or anyone without one, cannot spend the
/// rows another team's refusals need. Refusals of all teams together write at most
/// ``maximumRowsPerMinute`` rows of their own a minute; past that, a team's refusals go to its
/// suppressed row, which is written even then: a flood attributed to many teams (made-up
/// credentials for app IDs it knows) cannot hide from a team that its refusals went unrecorded.
/// So a minute writes at most ``maximumRowsPerMinute`` rows plus one suppressed row per team
/// refused in it (and one for refusals of no team).
///
/// What makes refusals "identical" is the caller's ``Refusal/key``, which leaves out what a caller
/// can vary at will (device IDs, made-up app IDs and key IDs). The counts of repeats are kept in
/// memory and added to their rows by ``flush(on:)`` (every few seconds and at shutdown).
final class RefusalLog: Sendable {
    /// One refusal to audit.
    struct Refusal: Sendable {
        let teamID: UUID?
        let action: String
        let actor: String
        let target: String
        let reason: String
        let deviceID: String?
        /// What identical refusals share (e.g. reason, app and key, or reason and client address).
        let key: String
    }

    /// The most refusal rows written per minute, all teams together (teams' suppressed rows aside).
    let maximumRowsPerMinute: Int
    /// The most rows one team's refusals (or those of no team) write per minute, its suppressed row included.
    let maximumRowsPerTeamPerMinute: Int

    private struct Row {
        let id: UUID
        var written = false
        /// Repeats counted since the row was written or last flushed.
        var repeats: Int64 = 0
    }

    private enum RowKind {
        case refusal
        /// A team's suppressed row, made when its own budget ran out (`ownBudget`) or that of all.
        case teamSuppressed(ownBudget: Bool)
    }

    private struct State {
        var minute: Int64 = .min
        var rows: [String: Row] = [:]
        /// Rows made this minute per team (the nil key: refusals of no team).
        var teamRows: [UUID?: Int] = [:]
        /// Refusal rows (not suppressed rows) made this minute, all teams together.
        var refusalRows = 0
        /// Repeats of rows of earlier minutes, waiting for the next flush.
        var pending: [UUID: Int64] = [:]
    }

    private let state = NIOLockedValueBox(State())

    init(maximumRowsPerMinute: Int = 500, maximumRowsPerTeamPerMinute: Int = 20) {
        self.maximumRowsPerMinute = maximumRowsPerMinute
        self.maximumRowsPerTeamPerMinute = maximumRowsPerTeamPerMinute
    }

    /// Audits `refusal`: writes a row when it is the first of its kind this minute, else counts it.
    func record(_ refusal: Refusal, on db: any Database, now: Date = Date()) async throws {
        let minute = Int64((now.timeIntervalSince1970 / 60).rounded(.down))
        let team = refusal.teamID
        let teamSuppressedKey = "\u{0}suppressed|" + (team?.uuidString ?? "none")
        let decision: (id: UUID, key: String, kind: RowKind)? = state.withLockedValue { state in
            if state.minute != minute {
                for row in state.rows.values where row.written && row.repeats > 0 { state.pending[row.id, default: 0] += row.repeats }
                state.rows.removeAll(keepingCapacity: true)
                state.teamRows.removeAll(keepingCapacity: true)
                state.refusalRows = 0
                state.minute = minute
            }
            // The refusal's own row, else its team's suppressed row (which always fits: refusal
            // rows stop one short of the team's budget).
            for key in [refusal.key, teamSuppressedKey] where state.rows[key] != nil {
                state.rows[key]!.repeats += 1
                return nil
            }
            let ownBudget = state.teamRows[team, default: 0] >= maximumRowsPerTeamPerMinute - 1
            let suppressed = ownBudget || state.refusalRows >= maximumRowsPerMinute
            let key = suppressed ? teamSuppressedKey : refusal.key
            if !suppressed { state.refusalRows += 1 }
            let id = UUID()
            state.rows[key] = Row(id: id)
            state.teamRows[team, default: 0] += 1
            return (id, key, suppressed ? .teamSuppressed(ownBudget: ownBudget) : .refusal)
        }
        guard let decision else { return }
        let record = switch decision.kind {
        case .refusal:
            AuditRecord(teamID: refusal.teamID, action: refusal.action, actor: String(refusal.actor.prefix(200)),
                        target: String(refusal.target.prefix(200)), outcome: "refused", reason: refusal.reason,
                        deviceID: refusal.deviceID.map { String($0.prefix(200)) })
        case .teamSuppressed(let ownBudget):
            AuditRecord(teamID: team, action: "audit.suppressed", actor: "server",
                        target: ownBudget ? "refusals past \(maximumRowsPerTeamPerMinute - 1) kinds in a minute"
                            : "refusals past the server's \(maximumRowsPerMinute) kinds in a minute, all teams together",
                        outcome: "refused", reason: "too many kinds of refusal", deviceID: nil)
        }
        record.id = decision.id
        record.repeatCount = 1
        do {
            try await record.create(on: db)
            state.withLockedValue { state in
                if state.rows[decision.key]?.id == decision.id { state.rows[decision.key]?.written = true }
            }
        } catch {
            // Not written: the next identical refusal tries again.
            state.withLockedValue { state in
                guard state.rows[decision.key]?.id == decision.id else { return }
                state.rows[decision.key] = nil
                state.teamRows[team, default: 1] -= 1
                if case .refusal = decision.kind { state.refusalRows -= 1 }
            }
            throw error
        }
    }

    /// Adds the repeats counted so far to their rows. Each row's count is its own statement; when
    /// one fails, it and every count not yet written are kept for the next flush (those written
    /// are not: they would be added twice).
    func flush(on db: any Database) async throws {
        let counts: [UUID: Int64] = state.withLockedValue { state in
            var counts = state.pending
            state.pending.removeAll()
            for (key, row) in state.rows where row.written && row.repeats > 0 {
                counts[row.id, default: 0] += row.repeats
                state.rows[key]!.repeats = 0
            }
            return counts
        }
        guard !counts.isEmpty, let sql = db as? any SQLDatabase else { return }
        var unwritten = counts
        for (id, count) in counts {
            do {
                try await sql.raw("UPDATE audit_events SET repeat_count = COALESCE(repeat_count, 1) + \(bind: count) WHERE id = \(bind: id)").run()
                unwritten[id] = nil
            } catch {
                let kept = unwritten
                state.withLockedValue { $0.pending.merge(kept, uniquingKeysWith: +) }
                throw error
            }
        }
    }
}

extension Application {
    private struct RefusalLogKey: StorageKey { typealias Value = RefusalLog }

    /// The server's refusal log (set by `configure`), for flushing it from outside.
    var refusals: RefusalLog? {
        get { storage[RefusalLogKey.self] }
        set { storage[RefusalLogKey.self] = newValue }
    }
}
