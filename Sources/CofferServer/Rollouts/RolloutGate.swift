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
        for rollout in running {
            let health = try await RolloutHealth.load(rollout.$deployment.id, on: db)
            switch RolloutDecision.decide(plan: rollout.plan, stageStartedAt: rollout.stageStartedAt, health: health, now: now) {
            case .halt(let reason):
                guard let change = try await Rollouts.halt(rollout, reason: reason, actor: Self.actor, at: now, on: db) else { continue }
                metrics.rolloutHalt(by: "gate")
                try await announce(change, rollout: rollout, action: "deployment.halt", reason: reason, on: db)
                logger.notice("rollout halted", metadata: ["deployment": "\(rollout.$deployment.id)", "sequence": "\(change.sequence)"])
            case .advance:
                guard let change = try await Rollouts.advance(rollout, from: rollout.stageIndex, actor: Self.actor, at: now, on: db) else { continue }
                let next = rollout.stages[rollout.stageIndex + 1]
                try await announce(change, rollout: rollout, action: "deployment.advance", reason: "stage \(next) %", on: db)
            case .wait:
                continue
            }
        }
    }

    /// Drops the collection's cached manifests here and audits the change for the collection's team.
    func announce(_ change: Rollouts.Change, rollout: RolloutRecord, action: String, reason: String, actor: String = Self.actor,
                  on db: any Database) async throws {
        manifests.invalidate(change.collectionID)
        guard let collection = try await CollectionRecord.find(change.collectionID, on: db),
              let deployment = try await DeploymentRecord.find(rollout.$deployment.id, on: db)
        else { return }
        try await Audit.record(on: db, teamID: collection.$team.id, action: action, actor: actor,
                               target: "\(collection.identifier)/\(deployment.name) #\(change.sequence)", outcome: "ok", reason: reason)
    }
}
