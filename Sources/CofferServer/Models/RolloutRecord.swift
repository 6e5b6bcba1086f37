import Fluent
import Foundation

/// A staged activation: the deployment devices move to stage by stage, the one the rest keep, the
/// gates that advance or halt it, and where it stands. Changed only by ``Rollouts``.
final class RolloutRecord: Model, @unchecked Sendable {
    static let schema = "rollouts"

    /// staged (stages running) → completed (at 100 %), halted (back on the previous deployment) or
    /// superseded (another activation replaced it).
    enum State: String, Codable, Sendable { case staged, completed, halted, superseded }

    @ID(key: .id) var id: UUID?
    @Parent(key: "collection_id") var collection: CollectionRecord
    @Parent(key: "deployment_id") var deployment: DeploymentRecord
    @Parent(key: "previous_deployment_id") var previousDeployment: DeploymentRecord
    /// The stages' percentages, comma-separated, increasing, the last 100.
    @Field(key: "stages") var stagesText: String
    @Field(key: "stage_index") var stageIndex: Int
    @Field(key: "stage_hours") var stageHours: Double
    /// The failure rate, in percent, at which the rollout halts.
    @Field(key: "halt_at") var haltAt: Double
    @Field(key: "min_reports") var minReports: Int
    @Field(key: "state") var state: State
    @Field(key: "stage_started_at") var stageStartedAt: Date
    @OptionalField(key: "halt_reason") var haltReason: String?
    @Field(key: "created_by") var createdBy: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    /// The collection's sequence number the rollout started with (its first stage's): the gate
    /// counts the reports devices made on this manifest or a later one (0 for rollouts from before
    /// migration 016: every report of the deployment).
    @Field(key: "start_sequence") var startSequence: Int64

    init() {}

    init(collectionID: UUID, deploymentID: UUID, previousDeploymentID: UUID, plan: RolloutPlan, startSequence: Int64, createdBy: String,
         at now: Date) {
        self.$collection.id = collectionID
        self.$deployment.id = deploymentID
        self.$previousDeployment.id = previousDeploymentID
        self.stagesText = plan.stages.map(String.init).joined(separator: ",")
        self.stageIndex = 0
        self.stageHours = plan.stageHours
        self.haltAt = plan.haltAt
        self.minReports = plan.minReports
        self.state = .staged
        self.stageStartedAt = now
        self.startSequence = startSequence
        self.createdBy = createdBy
    }

    /// The stages' percentages.
    var stages: [Int] { stagesText.split(separator: ",").compactMap { Int($0) } }

    /// The current stage's percentage (100 once completed).
    var stagePercent: Int {
        let stages = self.stages
        return state == .completed || !stages.indices.contains(stageIndex) ? 100 : stages[stageIndex]
    }

    /// The plan it runs.
    var plan: RolloutPlan { .stored(stages: stages, stageHours: stageHours, haltAt: haltAt, minReports: minReports) }
}
