import Fluent
import Foundation

/// An app may read a collection: its devices get the collection's manifests, and the keys of the
/// collection's activated deployments.
final class AppCollectionRecord: Model, @unchecked Sendable {
    static let schema = "app_collections"

    @ID(key: .id) var id: UUID?
    @Parent(key: "app_id") var app: AppRecord
    @Parent(key: "collection_id") var collection: CollectionRecord
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(appID: UUID, collectionID: UUID) {
        self.$app.id = appID
        self.$collection.id = collectionID
    }
}
