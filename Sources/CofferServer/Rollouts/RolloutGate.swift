import Fluent
import Foundation
import Vapor

/// Checks every running staged rollout (``PeriodicWork``, every COFFER_ROLLOUT_CHECK_SECONDS on
/// each instance): halts the ones whose devices fail, advances the ones whose stage has run its
/// time healthily. Each change is ``Rollouts``' compare-and-set, so with several instances checking
/// at once a change happens exactly once; the instance that made it audits it.
struct RolloutGate: Sendable {
    let manifests: ManifestService
    let targets: ReportTargets
    let metrics: ServerMetrics

    /// Who the audit log names for automatic changes.
    static let actor = "coffer (health gate)"

    func check(on db: any Database, logger: Logger, now: Date = Date()) async throws {
        let running = try await RolloutRecord.query(on: db).filter(\.$state == .staged).all()
        targets.setStages(Dictionary(running.map { ($0.$deployment.id, $0.stagePercent) }, uniquingKeysWith: { first, _ in first }))
        // One rollout's failure (a query that timed out, a lost race) does not skip the other
        // teams' rollouts of this round; the first failure is thrown once all were checked.
        var failure: (any Error)?
        for rollout in running {
            do {
                try await check(rollout, on: db, logger: logger, now: now)
            } catch {
                logger.warning("staged rollout not checked; trying again", metadata: ["deployment": "\(rollout.$deployment.id)"])
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
    }

    private func check(_ rollout: RolloutRecord, on db: any Database, logger: Logger, now: Date) async throws {
        // This rollout's devices only: not what they reported before it started (a halted
        // rollout of the same deployment, or its time as every device's).
        let health = try await RolloutHealth.load(rollout.$deployment.id, since: rollout.startSequence, on: db)
        switch RolloutDecision.decide(plan: rollout.plan, stageStartedAt: rollout.stageStartedAt, health: health, now: now) {
        case .halt(let reason):
            guard let change = try await halt(rollout, reason: reason, at: now, on: db) else { return }
            logger.notice("rollout halted", metadata: ["deployment": "\(rollout.$deployment.id)", "sequence": "\(change.sequence)"])
        case .advance:
            _ = try await advance(rollout, at: now, on: db)
        case .wait:
            return
        }
    }

    /// Halts `rollout` (by the gate, or by `actor` when a person asks) and announces it; nil when it
    /// was no longer staged.
    func halt(_ rollout: RolloutRecord, reason: String, actor: String? = nil, at now: Date, on db: any Database) async throws -> Rollouts.Change? {
        guard let change = try await Rollouts.halt(rollout, reason: reason, actor: actor ?? Self.actor, at: now, on: db) else { return nil }
        metrics.rolloutHalt(by: actor == nil ? "gate" : "person")
        try await announce(change, rollout: rollout, action: "deployment.halt", reason: reason, actor: actor ?? Self.actor, on: db)
        return change
    }

    /// Moves `rollout` to its next stage (by the gate, or by `actor`) and announces it; nil when it
    /// was no longer at that stage.
    func advance(_ rollout: RolloutRecord, actor: String? = nil, at now: Date, on db: any Database) async throws -> Rollouts.Change? {
        guard let change = try await Rollouts.advance(rollout, from: rollout.stageIndex, actor: actor ?? Self.actor, at: now, on: db) else {
            return nil
        }
        try await announce(change, rollout: rollout, action: "deployment.advance", reason: "stage \(rollout.stages[rollout.stageIndex + 1]) %",
                           actor: actor ?? Self.actor, on: db)
        return change
    }

    /// Drops the collection's cached manifests here and audits the change for the collection's team.
    private func announce(_ change: Rollouts.Change, rollout: RolloutRecord, action: String, reason: String, actor: String,
                          on db: any Database) async throws {
        manifests.invalidate(change.collectionID)
        guard let collection = try await CollectionRecord.find(change.collectionID, on: db),
              let deployment = try await DeploymentRecord.find(rollout.$deployment.id, on: db)
        else { return }
        try await Audit.record(on: db, teamID: collection.$team.id, action: action, actor: actor,
                               target: "\(collection.identifier)/\(deployment.name) #\(change.sequence)", outcome: "ok", reason: reason)
    }
}
