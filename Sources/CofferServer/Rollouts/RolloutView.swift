import Foundation
import Vapor

/// A staged rollout as the API shows it (in a deployment and in its status).
struct RolloutView: Content, Equatable {
    let state: String
    let stages: [Int]
    let stageIndex: Int
    let stagePercent: Int
    let stageStartedAt: Date
    /// When the timer may advance the stage (if the gate allows); nil unless staged.
    let nextStageAt: Date?
    let stageHours: Double
    let haltAt: Double
    let minReports: Int
    let haltReason: String?
    let createdBy: String

    init(_ rollout: RolloutRecord) {
        state = rollout.state.rawValue
        stages = rollout.stages
        stageIndex = rollout.stageIndex
        stagePercent = rollout.stagePercent
        stageStartedAt = rollout.stageStartedAt
        nextStageAt = rollout.state == .staged ? rollout.stageStartedAt.addingTimeInterval(rollout.stageHours * 3600) : nil
        stageHours = rollout.stageHours
        haltAt = rollout.haltAt
        minReports = rollout.minReports
        haltReason = rollout.haltReason
        createdBy = rollout.createdBy
    }

    /// One line: "staged: stage 2 of 4 (10 %)", "halted: 7 of 58 devices …", "completed".
    var summary: String {
        switch state {
        case "staged": "staged: stage \(stageIndex + 1) of \(stages.count) (\(stagePercent) %)"
        case "halted": "halted: " + (haltReason ?? "")
        default: state
        }
    }
}

/// The options of a staged activation, as the API takes them (`POST …/activate` with a body).
struct ActivationOptions: Content {
    var stages: [Int]?
    var stageHours: Double?
    var haltAt: Double?
    var minReports: Int?

    /// The plan, nil for a plain activation (no stages, or a single stage of 100 %); 400 for
    /// gate options without stages or a plan that is not valid.
    func plan() throws -> RolloutPlan? {
        guard let stages else {
            guard stageHours == nil, haltAt == nil, minReports == nil else {
                throw APIError.invalid("stageHours, haltAt and minReports go with stages (e.g. \"stages\": [1, 10, 50, 100])")
            }
            return nil
        }
        let plan = try RolloutPlan(stages: stages, stageHours: stageHours, haltAt: haltAt, minReports: minReports)
        return plan.stages == [100] ? nil : plan
    }
}
