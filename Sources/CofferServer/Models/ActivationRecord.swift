import Fluent
import Foundation

/// One activation of a deployment: the collection's history (who activated what, when).
final class ActivationRecord: Model, @unchecked Sendable {
    static let schema = "activations"

    @ID(key: .id) var id: UUID?
    @Parent(key: "collection_id") var collection: CollectionRecord
    @Parent(key: "deployment_id") var deployment: DeploymentRecord
    /// The collection's sequence number this activation produced.
    @Field(key: "sequence") var sequence: Int64
    /// `activate` or `rollback`.
    @Field(key: "kind") var kind: String
    @Field(key: "actor") var actor: String
    @Timestamp(key: "at", on: .create) var at: Date?

    init() {}

    init(collectionID: UUID, deploymentID: UUID, sequence: Int64, kind: String, actor: String) {
        self.$collection.id = collectionID
        self.$deployment.id = deploymentID
        self.sequence = sequence
        self.kind = kind
        self.actor = actor
    }
}
