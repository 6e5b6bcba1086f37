import Fluent
import Foundation

/// A model key that a deployment of a collection uses or used once it was activated (drafts and
/// never-activated deployments add none). Rows are only ever added: a device may still hold a
/// model of an earlier deployment, and a rollback re-activates one.
final class CollectionKeyRecord: Model, @unchecked Sendable {
    static let schema = "collection_keys"

    @ID(key: .id) var id: UUID?
    @Parent(key: "collection_id") var collection: CollectionRecord
    @Field(key: "key_id") var keyID: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(collectionID: UUID, keyID: String) {
        self.$collection.id = collectionID
        self.keyID = keyID
    }
}
