import Foundation

/// What a staged rollout's gate decides, from its plan, its stage and the health of the devices on
/// the new deployment. Pure: the same inputs always give the same decision.
enum RolloutDecision: Equatable, Sendable {
    /// Every device back on the previous deployment, for this reason.
    case halt(String)
    /// On to the next stage.
    case advance
    /// Stay at this stage.
    case wait

    /// The decision now.
    ///
    /// Halt when some model, among those with at least `minReports` reporting devices, failed on
    /// `haltAt` % of them or more. Advance when the stage has run `stageHours`, at least
    /// `minReports` devices reported and no such model reached `haltAt`. Otherwise wait (a stage
    /// without enough reports waits for them).
    static func decide(plan: RolloutPlan, stageStartedAt: Date, health: RolloutHealth, now: Date) -> RolloutDecision {
        if let worst = health.worst(minReports: plan.minReports), worst.failureRate >= plan.haltAt {
            return .halt(reason(worst, haltAt: plan.haltAt))
        }
        let due = now.timeIntervalSince(stageStartedAt) >= plan.stageHours * 3600
        return due && health.devices >= plan.minReports && health.worst(minReports: plan.minReports) != nil ? .advance : .wait
    }

    /// "7 of 58 devices failed to load FlowerClassifier: 12.1 % ≥ 5 %".
    static func reason(_ model: RolloutHealth.Model, haltAt: Double) -> String {
        "\(model.failed) of \(model.devices) devices failed to load \(model.model): \(percent(model.failureRate)) % ≥ \(percent(haltAt)) %"
    }

    /// A percentage with at most one decimal, without a trailing ".0".
    static func percent(_ value: Double) -> String {
        let tenths = (value * 10).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? String(Int(tenths / 10)) : String(format: "%.1f", tenths / 10)
    }
}
