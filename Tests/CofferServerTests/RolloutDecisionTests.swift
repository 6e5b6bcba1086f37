@testable import CofferServer
import Foundation
import Testing

/// The gate's decision alone: thresholds are inclusive, a stage waits for its reports and its time,
/// and the halt reason reads as the issue asks.
@Suite("Rollout gate decisions")
struct RolloutDecisionTests {
    static func plan(haltAt: Double = 5, minReports: Int = 20, hours: Double = 24) throws -> RolloutPlan {
        try RolloutPlan(stages: [1, 10, 50, 100], stageHours: hours, haltAt: haltAt, minReports: minReports)
    }

    static func health(_ models: [(String, Int, Int)]) -> RolloutHealth {
        RolloutHealth(devices: models.map(\.1).max() ?? 0, outcomes: [:],
                      models: models.map { RolloutHealth.Model(model: $0.0, devices: $0.1, failed: $0.2) })
    }

    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("a failure rate at the threshold halts, one just below does not; the worst model with enough reports decides")
    func thresholds() throws {
        let plan = try Self.plan()
        let early = start.addingTimeInterval(60)
        #expect(RolloutDecision.decide(plan: plan, stageStartedAt: start, health: Self.health([("A", 40, 2)]), now: early)
                == .halt("2 of 40 devices failed to load A: 5 % ≥ 5 %"))
        #expect(RolloutDecision.decide(plan: plan, stageStartedAt: start, health: Self.health([("A", 41, 2)]), now: early) == .wait)
        #expect(RolloutDecision.decide(plan: plan, stageStartedAt: start, health: Self.health([("A", 58, 7), ("B", 58, 1)]), now: early)
                == .halt("7 of 58 devices failed to load A: 12.1 % ≥ 5 %"))
        // Too few reports to judge: 19 devices, all failed, wait (and never advance).
        #expect(RolloutDecision.decide(plan: plan, stageStartedAt: start, health: Self.health([("A", 19, 19)]), now: early) == .wait)
        #expect(RolloutDecision.decide(plan: plan, stageStartedAt: start, health: Self.health([("A", 19, 0)]),
                                       now: start.addingTimeInterval(48 * 3600)) == .wait)
    }

    @Test("a healthy stage advances once its hours have run, not before")
    func timer() throws {
        let plan = try Self.plan(hours: 2)
        let healthy = Self.health([("A", 30, 1), ("B", 30, 0)])
        #expect(RolloutDecision.decide(plan: plan, stageStartedAt: start, health: healthy, now: start.addingTimeInterval(7199)) == .wait)
        #expect(RolloutDecision.decide(plan: plan, stageStartedAt: start, health: healthy, now: start.addingTimeInterval(7200)) == .advance)
    }

    @Test("plans are refused when their stages or gates make no sense")
    func plans() {
        for (stages, hours, halt, reports) in [([Int](), nil, nil, nil), ([10, 50], nil, nil, nil), ([50, 10, 100], nil, nil, nil),
                                               ([0, 100], nil, nil, nil), ([10, 10, 100], nil, nil, nil), ([10, 100], 0.0, nil, nil),
                                               ([10, 100], Double.nan, nil, nil), ([10, 100], 9000.0, nil, nil), ([10, 100], nil, 0.0, nil),
                                               ([10, 100], nil, 101.0, nil), ([10, 100], nil, nil, 0), ([10, 100], nil, nil, 2_000_000),
                                               (Array(1...21) + [100], nil, nil, nil)] as [([Int], Double?, Double?, Int?)] {
            #expect(throws: APIError.self, "\(stages) \(String(describing: hours)) \(String(describing: halt)) \(String(describing: reports))") {
                _ = try RolloutPlan(stages: stages, stageHours: hours, haltAt: halt, minReports: reports)
            }
        }
        #expect(RolloutDecision.percent(12.0689) == "12.1" && RolloutDecision.percent(100) == "100" && RolloutDecision.percent(4.96) == "5")
    }
}
