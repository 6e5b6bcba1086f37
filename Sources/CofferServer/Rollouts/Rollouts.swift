import Fluent
import Foundation
import SQLKit

/// The state changes of a staged activation, each one transaction that begins with a
/// compare-and-set on the rollout's row: with several server instances (or a person and a timer)
/// trying the same change, exactly one makes it, and every change gives the collection a new
/// sequence number so devices move at their next manifest check.
enum Rollouts {
    /// A change made: the collection's new sequence number.
    struct Change: Sendable {
        let rolloutID: UUID
        let collectionID: UUID
        let deploymentID: UUID
        let sequence: Int64
    }

    /// The activation history's kind of a stage change to `percent` (as devices and people read it).
    static func stageKind(_ percent: Int) -> String { "stage \(percent) %" }

    /// Whether an activation history's `kind` is a stage that reached only some devices.
    static func isPartialStage(_ kind: String) -> Bool { kind.hasPrefix("stage ") && kind != stageKind(100) }

    /// Starts a staged activation of `deploymentID`: stage 1 of `plan` gets it, every other device
    /// keeps the deployment active now. 409 when the collection has no active deployment, when
    /// `deploymentID` is the active one, or when another staged rollout runs.
    /// With `checked`, the deployment must still have that spec (``Activation/apply(_:in:kind:actor:at:checked:on:)``).
    ///
    /// The rollout records the sequence number it starts with, and its gate counts only what devices
    /// reported on that manifest or a later one (``RolloutHealth/load(_:since:on:)``): a deployment
    /// staged again after a halt, or once active for every device, is judged by this rollout's
    /// devices, not by failures (or healthy reports) from before, which would halt it at once (or
    /// advance it with no new report at all). Nothing is deleted here: the earlier outcomes stay in
    /// their rows until a device reports on the new manifest (``ReportBuffer/flush(on:retention:now:)``).
    static func start(_ deploymentID: UUID, in collectionID: UUID, plan: RolloutPlan, actor: String, at now: Date,
                      checked: DeploymentSpec? = nil, on db: any Database) async throws -> Change {
        try await db.writeTransaction { tx in
            let previous = try await activeDeployment(of: collectionID, lockingOn: tx)
            guard let previous else {
                throw APIError.conflict("a staged activation starts from an active deployment; activate the first one without stages")
            }
            guard previous != deploymentID else { throw APIError.conflict("this deployment is already active") }
            if let running = try await RolloutRecord.query(on: tx).filter(\.$collection.$id == collectionID).filter(\.$state == .staged).first() {
                throw APIError.conflict("a staged rollout (stage \(running.stagePercent) %) is running; advance it to 100 %, halt it, or activate without stages")
            }
            let sequence = try await Activation.apply(deploymentID, in: collectionID, kind: stageKind(plan.stages[0]), actor: actor, at: now,
                                                      checked: checked, on: tx)
            let rollout = RolloutRecord(collectionID: collectionID, deploymentID: deploymentID, previousDeploymentID: previous,
                                        plan: plan, startSequence: sequence, createdBy: actor, at: now)
            try await rollout.create(on: tx)
            return Change(rolloutID: try rollout.requireID(), collectionID: collectionID, deploymentID: deploymentID, sequence: sequence)
        }
    }

    /// Moves a staged rollout from stage `index` to the next (completed at the last); nil when it is
    /// no longer staged at `index` (someone else moved it).
    static func advance(_ rollout: RolloutRecord, from index: Int, actor: String, at now: Date, on db: any Database) async throws -> Change? {
        let stages = rollout.stages
        let next = index + 1
        guard stages.indices.contains(next) else { return nil }
        let state: RolloutRecord.State = next == stages.count - 1 ? .completed : .staged
        let rolloutID = try rollout.requireID()
        return try await db.writeTransaction { tx in
            // The collection's row first, as every activation takes it: the other order deadlocked
            // with an activation on PostgreSQL.
            _ = try await activeDeployment(of: rollout.$collection.id, lockingOn: tx)
            let sql = try tx.sql()
            guard try await sql.raw("""
                UPDATE rollouts SET stage_index = \(bind: next), stage_started_at = \(bind: now), state = \(bind: state.rawValue) \
                WHERE id = \(bind: rolloutID) AND state = 'staged' AND stage_index = \(bind: index) RETURNING id
                """).first() != nil
            else { return nil }
            let deploymentID = rollout.$deployment.id, collectionID = rollout.$collection.id
            let sequence = try await Activation.bump(collectionID, to: deploymentID, kind: stageKind(stages[next]), actor: actor, on: tx)
            return Change(rolloutID: rolloutID, collectionID: collectionID, deploymentID: deploymentID, sequence: sequence)
        }
    }

    /// Halts a staged rollout: the previous deployment is active again for every device, with a new
    /// sequence number; nil when it is no longer staged.
    static func halt(_ rollout: RolloutRecord, reason: String, actor: String, at now: Date, on db: any Database) async throws -> Change? {
        let rolloutID = try rollout.requireID()
        return try await db.writeTransaction { tx in
            _ = try await activeDeployment(of: rollout.$collection.id, lockingOn: tx)  // the collection's row first (advance)
            let sql = try tx.sql()
            guard try await sql.raw("""
                UPDATE rollouts SET state = 'halted', halt_reason = \(bind: reason) \
                WHERE id = \(bind: rolloutID) AND state = 'staged' RETURNING id
                """).first() != nil
            else { return nil }
            let previous = rollout.$previousDeployment.id, collectionID = rollout.$collection.id
            let sequence = try await Activation.apply(previous, in: collectionID, kind: "halt", actor: actor, at: now, on: tx)
            return Change(rolloutID: rolloutID, collectionID: collectionID, deploymentID: previous, sequence: sequence)
        }
    }

    /// The staged rollout of `deploymentID` that is running, if any.
    static func running(_ deploymentID: UUID, on db: any Database) async throws -> RolloutRecord? {
        try await RolloutRecord.query(on: db).filter(\.$deployment.$id == deploymentID).filter(\.$state == .staged).first()
    }

    /// The newest rollout of `deploymentID`, whatever its state: the one with the largest start
    /// sequence, as ``startSequences(of:on:)`` judges (times come from each instance's clock;
    /// sequence numbers only grow). Rollouts from before migration 016 (start 0) by time.
    static func latest(_ deploymentID: UUID, on db: any Database) async throws -> RolloutRecord? {
        try await RolloutRecord.query(on: db).filter(\.$deployment.$id == deploymentID)
            .sort(\.$startSequence, .descending).sort(\.$createdAt, .descending).first()
    }

    /// The start sequence of each deployment's newest staged activation, for those of
    /// `deploymentIDs` that had one (sequence numbers only grow, so the newest has the largest).
    static func startSequences(of deploymentIDs: Set<UUID>, on sql: any SQLDatabase) async throws -> [UUID: Int64] {
        let ids = Array(deploymentIDs)
        var starts: [UUID: Int64] = [:]
        for offset in stride(from: 0, to: ids.count, by: 500) {
            let part = Array(ids[offset..<min(offset + 500, ids.count)])
            let rows = try await sql.raw("""
                SELECT deployment_id, MAX(start_sequence) AS start_sequence FROM rollouts \
                WHERE deployment_id IN (\(binds: part)) GROUP BY deployment_id
                """).all()
            for row in rows {
                starts[try row.decode(column: "deployment_id", as: UUID.self)] = try row.decode(column: "start_sequence", as: Int64.self)
            }
        }
        return starts
    }

    /// The collection's active deployment, read so that no other activation changes it before this
    /// transaction ends (PostgreSQL: the row's lock; SQLite: ``Database/writeTransaction(_:)``
    /// holds the write lock already).
    ///
    /// `FOR NO KEY UPDATE`, the lock an activation's `UPDATE collections` takes: it excludes every
    /// other activation, stage change and edit of the collection, but not the `KEY SHARE` lock a
    /// new row referring to the collection takes (a model version an edit creates). `FOR UPDATE`
    /// conflicted with those: two edits that each created a version deadlocked, and a halt waited
    /// for an edit reading model headers from the store.
    static func activeDeployment(of collectionID: UUID, lockingOn tx: any Database) async throws -> UUID? {
        let sql = try tx.sql()
        let lock = sql.dialect.name == "postgresql" ? " FOR NO KEY UPDATE" : ""
        guard let row = try await sql.raw("SELECT active_deployment_id FROM collections WHERE id = \(bind: collectionID)\(unsafeRaw: lock)").first()
        else { throw APIError.notFound("collection") }
        return try row.decodeNil(column: "active_deployment_id") ? nil : row.decode(column: "active_deployment_id", as: UUID.self)
    }
}
