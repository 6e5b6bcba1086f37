import Foundation

/// How a staged activation runs: its stages (percent of devices, increasing, ending at 100), how
/// long each stage lasts at least, the failure rate that halts it and the reports a gate needs.
struct RolloutPlan: Codable, Sendable, Equatable {
    var stages: [Int]
    var stageHours: Double
    /// Percent of reporting devices that failed, at or above which the rollout halts.
    var haltAt: Double
    /// Reporting devices a gate needs before it advances or halts a stage.
    var minReports: Int

    static let defaultStageHours = 24.0
    static let defaultHaltAt = 5.0
    static let defaultMinReports = 20

    /// A plan from an activation's options; 400 naming the first option that is not valid.
    init(stages: [Int], stageHours: Double?, haltAt: Double?, minReports: Int?) throws {
        guard (1...20).contains(stages.count) else { throw APIError.invalid("stages: give 1 to 20 percentages, e.g. 1,10,50,100") }
        for (index, stage) in stages.enumerated() {
            guard (1...100).contains(stage) else { throw APIError.invalid("stages: \(stage) is not a percentage from 1 to 100") }
            guard index == 0 || stage > stages[index - 1] else { throw APIError.invalid("stages must increase: \(stage) follows \(stages[index - 1])") }
        }
        guard stages.last == 100 else { throw APIError.invalid("the last stage must be 100 (every device)") }
        let hours = stageHours ?? Self.defaultStageHours
        guard hours.isFinite, hours > 0, hours <= 8760 else { throw APIError.invalid("stageHours must be above 0 and at most 8760 (a year)") }
        let halt = haltAt ?? Self.defaultHaltAt
        guard halt.isFinite, halt > 0, halt <= 100 else { throw APIError.invalid("haltAt must be a percentage above 0, at most 100") }
        let reports = minReports ?? Self.defaultMinReports
        guard (1...1_000_000).contains(reports) else { throw APIError.invalid("minReports must be from 1 to 1000000") }
        self.init(stages: stages, stageHours: hours, haltAt: halt, minReports: reports)
    }

    private init(stages: [Int], stageHours: Double, haltAt: Double, minReports: Int) {
        self.stages = stages
        self.stageHours = stageHours
        self.haltAt = haltAt
        self.minReports = minReports
    }

    /// The plan a stored rollout runs (its values were checked when it started).
    static func stored(stages: [Int], stageHours: Double, haltAt: Double, minReports: Int) -> RolloutPlan {
        RolloutPlan(stages: stages, stageHours: stageHours, haltAt: haltAt, minReports: minReports)
    }
}
