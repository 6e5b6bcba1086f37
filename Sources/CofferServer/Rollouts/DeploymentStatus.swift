import Fluent
import Foundation
import Vapor

/// `GET …/deployments/:deployment/status`: where a deployment's rollout stands and how its devices
/// fare (docs/ROLLOUTS.md).
struct DeploymentStatus: Content {
    struct Reason: Content { let reason: String; let count: Int }

    let deployment: UUID
    let name: String
    /// The deployment's status (draft, active, archived), or its rollout's state while one runs or
    /// after it halted.
    let state: String
    let rollout: RolloutView?
    let devices: Int
    let outcomes: [String: Int]
    let models: [ModelHealth]
    /// The worst model's failure rate among those with enough reports (else the worst of all), percent.
    let failureRate: Double
    let topReasons: [Reason]

    struct ModelHealth: Content {
        let model: String
        let devices: Int
        let failed: Int
        let failureRate: Double
    }

    /// The counts are those of the deployment's newest staged activation, if it had one
    /// (``RolloutHealth``): after a halt, the halted rollout's; staged again, the new one's.
    static func make(_ deployment: DeploymentRecord, on db: any Database) async throws -> DeploymentStatus {
        let rollout = try await Rollouts.latest(try deployment.requireID(), on: db)
        return try await make(deployment, rollout: rollout.map(RolloutView.init), since: rollout?.startSequence ?? 0, on: db)
    }

    /// The status when the deployment's newest rollout is already read (a deployment's page has it
    /// in its ``DeploymentView``, which does not say where its counts start: read here).
    static func make(_ deployment: DeploymentRecord, rollout: RolloutView?, on db: any Database) async throws -> DeploymentStatus {
        var since: Int64 = 0
        if rollout != nil { since = try await Rollouts.latest(try deployment.requireID(), on: db)?.startSequence ?? 0 }
        return try await make(deployment, rollout: rollout, since: since, on: db)
    }

    private static func make(_ deployment: DeploymentRecord, rollout: RolloutView?, since: Int64,
                             on db: any Database) async throws -> DeploymentStatus {
        let id = try deployment.requireID()
        let health = try await RolloutHealth.load(id, since: since, on: db)
        let reasons = try await RolloutHealth.topReasons(id, since: since, on: db)
        let worst = health.worst(minReports: rollout?.minReports ?? 1) ?? health.worst(minReports: 0)
        let running = rollout.flatMap { ["staged", "halted"].contains($0.state) ? $0.state : nil }
        return DeploymentStatus(
            deployment: id, name: deployment.name, state: running ?? deployment.status.rawValue, rollout: rollout,
            devices: health.devices, outcomes: health.outcomes,
            models: health.models.map { ModelHealth(model: $0.model, devices: $0.devices, failed: $0.failed, failureRate: $0.failureRate) },
            failureRate: worst?.failureRate ?? 0, topReasons: reasons.map { Reason(reason: $0.reason, count: $0.count) })
    }
}
