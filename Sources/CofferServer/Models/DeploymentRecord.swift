import Fluent
import Foundation

/// A deployment of a collection: default models, targeting rules, and a status.
///
/// No route deletes a deployment. Code that ever does must delete its `report_devices` rows in
/// the same transaction: SQLite cascades them by a foreign key, PostgreSQL no longer has that key
/// (migration 017, ``DropReportDeviceForeignKey``).
final class DeploymentRecord: Model, @unchecked Sendable {
    static let schema = "deployments"

    /// draft (editable) → active (what devices get; one per collection) → archived (replaced; may be re-activated).
    enum Status: String, Codable, Sendable { case draft, active, archived }

    @ID(key: .id) var id: UUID?
    @Parent(key: "collection_id") var collection: CollectionRecord
    @Field(key: "name") var name: String
    @Field(key: "status") var status: Status
    /// Random at creation and inherited by clones, so a clone that raises a rollout keeps its devices.
    @Field(key: "rollout_seed") var rolloutSeed: String
    @Field(key: "spec") var spec: DeploymentSpec
    @Field(key: "created_by") var createdBy: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    @OptionalField(key: "activated_at") var activatedAt: Date?

    init() {}

    init(collectionID: UUID, name: String, rolloutSeed: String, spec: DeploymentSpec, createdBy: String) {
        self.$collection.id = collectionID
        self.name = name
        self.status = .draft
        self.rolloutSeed = rolloutSeed
        self.spec = spec
        self.createdBy = createdBy
    }
}

/// What a deployment ships: a model version per model name, and rules evaluated in order.
struct DeploymentSpec: Codable, Sendable, Equatable {
    /// Model name → model version ID: what a device gets when no rule matches.
    var defaults: [String: UUID]
    var rules: [Rule]

    /// A targeting rule: when the condition holds, these models replace the defaults.
    struct Rule: Codable, Sendable, Equatable {
        /// The normalised condition text (``TargetingCondition/text``).
        var condition: String
        var models: [String: UUID]
    }

    /// Every model version the deployment names.
    var versionIDs: Set<UUID> { Set(defaults.values).union(rules.flatMap(\.models.values)) }
}
