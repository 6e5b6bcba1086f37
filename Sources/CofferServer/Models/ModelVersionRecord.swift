import Fluent
import Foundation

/// One sealed model uploaded for one model name of a collection: what a manifest's version ID names.
final class ModelVersionRecord: Model, @unchecked Sendable {
    static let schema = "model_versions"

    @ID(key: .id) var id: UUID?
    @Parent(key: "collection_id") var collection: CollectionRecord
    @Field(key: "model_name") var modelName: String
    /// The blob's address: SHA-256 of the sealed container.
    @Field(key: "blob_id") var blobID: String
    @Field(key: "size") var size: Int64
    /// The model key that opens it, from the container's header.
    @Field(key: "key_id") var keyID: String
    @Field(key: "created_by") var createdBy: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(collectionID: UUID, modelName: String, blobID: String, size: Int64, keyID: String, createdBy: String) {
        self.$collection.id = collectionID
        self.modelName = modelName
        self.blobID = blobID
        self.size = size
        self.keyID = keyID
        self.createdBy = createdBy
    }
}
