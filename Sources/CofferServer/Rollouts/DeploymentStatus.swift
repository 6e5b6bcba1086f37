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

    static func make(_ deployment: DeploymentRecord, on db: any Database) async throws -> DeploymentStatus {
        try await make(deployment, rollout: Rollouts.latest(try deployment.requireID(), on: db).map(RolloutView.init), on: db)
    }

    /// The status when the deployment's newest rollout is already read (a deployment's page has it
    /// in its ``DeploymentView``).
    static func make(_ deployment: DeploymentRecord, rollout: RolloutView?, on db: any Database) async throws -> DeploymentStatus {
        let id = try deployment.requireID()
        let health = try await RolloutHealth.load(id, on: db)
        let reasons = try await RolloutHealth.topReasons(id, on: db)
        let worst = health.worst(minReports: rollout?.minReports ?? 1) ?? health.worst(minReports: 0)
        let running = rollout.flatMap { ["staged", "halted"].contains($0.state) ? $0.state : nil }
        return DeploymentStatus(
            deployment: id, name: deployment.name, state: running ?? deployment.status.rawValue, rollout: rollout,
            devices: health.devices, outcomes: health.outcomes,
            models: health.models.map { ModelHealth(model: $0.model, devices: $0.devices, failed: $0.failed, failureRate: $0.failureRate) },
            failureRate: worst?.failureRate ?? 0, topReasons: reasons.map { Reason(reason: $0.reason, count: $0.count) })
    }
}
