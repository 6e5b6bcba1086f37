import Foundation

/// The deployment page's rollout card: where a staged rollout stands and how the deployment's
/// devices fare (``DeploymentStatus``), as text for the template.
struct RolloutPanel: Encodable, Sendable {
    struct Model: Encodable, Sendable {
        let model: String
        let devices: Int
        let failed: Int
        let rate: String
        /// At or above the rollout's halt threshold.
        let isFailing: Bool
    }
    struct Reason: Encodable, Sendable { let reason: String; let count: Int }

    let hasRollout: Bool
    let state: String
    let summary: String
    let stages: String
    let gate: String
    let devices: Int
    let outcomes: String
    let models: [Model]
    let reasons: [Reason]
    let isStaged: Bool

    init(_ status: DeploymentStatus) {
        let rollout = status.rollout
        hasRollout = rollout != nil
        state = rollout?.state ?? status.state
        summary = rollout?.summary ?? ""
        stages = rollout.map { plan in
            plan.stages.enumerated().map { index, percent in
                index == plan.stageIndex && plan.state == "staged" ? "[\(percent) %]" : "\(percent) %"
            }.joined(separator: " → ")
        } ?? ""
        gate = rollout.map {
            "Each stage runs at least \(RolloutDecision.percent($0.stageHours)) h; the rollout halts when \(RolloutDecision.percent($0.haltAt)) % "
                + "or more of at least \($0.minReports) reporting devices failed to load a model."
        } ?? ""
        devices = status.devices
        outcomes = ReportOutcome.allCases.map { "\(status.outcomes[$0.rawValue] ?? 0) \($0.rawValue)" }.joined(separator: " · ")
        let haltAt = rollout?.haltAt ?? 100
        models = status.models.map {
            Model(model: $0.model, devices: $0.devices, failed: $0.failed, rate: RolloutDecision.percent($0.failureRate) + " %",
                  isFailing: $0.failureRate >= haltAt && rollout != nil)
        }
        reasons = status.topReasons.map { Reason(reason: $0.reason, count: $0.count) }
        isStaged = rollout?.state == "staged"
    }
}
