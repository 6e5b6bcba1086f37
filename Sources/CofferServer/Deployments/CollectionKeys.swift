import Fluent
import Foundation

/// Which model keys a collection's activated deployments use (``CollectionKeyRecord``): the keys an
/// app bound to the collection may have delivered.
enum CollectionKeys {
    /// Records the keys `deployment` uses for its collection, once each; called in the
    /// activation's transaction, so a key is deliverable exactly when a deployment using it was
    /// activated.
    static func record(_ deployment: DeploymentRecord, on db: any Database) async throws {
        let collectionID = deployment.$collection.id
        let versions = try await DeploymentView.versions(deployment.spec.versionIDs, on: db)
        let used = Set(versions.values.map(\.keyID))
        guard !used.isEmpty else { return }
        let known = Set(try await CollectionKeyRecord.query(on: db).filter(\.$collection.$id == collectionID)
            .filter(\.$keyID ~~ Array(used)).all().map(\.keyID))
        for keyID in used.subtracting(known).sorted() {
            try await CollectionKeyRecord(collectionID: collectionID, keyID: keyID).create(on: db)
        }
    }

    /// Whether some collection that `appID` is bound to has `keyID` recorded.
    static func isDeliverable(_ keyID: String, to appID: UUID, on db: any Database) async throws -> Bool {
        let bound = try await AppCollectionRecord.query(on: db).filter(\.$app.$id == appID).all().map(\.$collection.id)
        guard !bound.isEmpty else { return false }
        return try await CollectionKeyRecord.query(on: db).filter(\.$keyID == keyID).filter(\.$collection.$id ~~ bound).first() != nil
    }
}
