import CofferFormat
import Fluent
import Foundation
import SQLKit

/// Turns `model name → blob address` into model versions of a collection, creating each
/// (collection, name, blob) version once. Refuses names outside the collection, blobs the server
/// does not have, containers that are damaged or sealed with a passphrase, and keys that are not
/// live keys of the collection's team.
struct ModelVersions {
    let collection: CollectionRecord
    let store: any BlobStore
    let actor: String
    let database: any Database

    func resolve(_ models: [String: String]) async throws -> [String: UUID] {
        var resolved: [String: UUID] = [:]
        // In name order: concurrent transactions that make the same versions then wait for each
        // other's rows in one order, instead of deadlocking.
        for (name, address) in models.sorted(by: { $0.key < $1.key }) {
            resolved[name] = try await version(of: name, address: address.lowercased())
        }
        return resolved
    }

    private func version(of name: String, address: String) async throws -> UUID {
        guard collection.modelNames.contains(name) else {
            throw APIError.invalid("\(collection.identifier) has no model named \(name) (it has \(collection.modelNames.joined(separator: ", ")))")
        }
        guard BlobAddress.isValid(address) else { throw APIError.invalid("\(name): a blob address is 64 lowercase hex digits") }
        let collectionID = try collection.requireID()
        if let existing = try await ModelVersionRecord.query(on: database)
            .filter(\.$collection.$id == collectionID).filter(\.$modelName == name).filter(\.$blobID == address).first() {
            try await markUsed(address, name: name)
            return try existing.requireID()
        }
        let found: HeaderFacts?
        do {
            found = try await store.facts(of: address)
        } catch let error as ContainerError {
            throw APIError(.unprocessableEntity, "not_a_container", "\(name): the blob \(address.prefix(12))… is not a valid Coffer container: \(error)")
        }
        guard let found, try await BlobRecord.find(address, on: database) != nil else {
            throw APIError(.unprocessableEntity, "unknown_blob", "\(name): the server has no blob \(address.prefix(12))…; upload it first")
        }
        guard let keyID = found.keyID else {
            throw APIError(.unprocessableEntity, "passphrase_container",
                           "\(name) is sealed with a passphrase; devices can only get model keys: seal it with a model key of this team")
        }
        guard let key = try await KeyRecord.find(keyID, on: database), key.$team.id == collection.$team.id else {
            throw APIError(.unprocessableEntity, "foreign_key", "\(name) is sealed with key \(keyID), which is not a key of this team")
        }
        guard key.revokedAt == nil else { throw APIError(.unprocessableEntity, "key_revoked", "\(name) is sealed with key \(keyID), which is revoked") }
        try await markUsed(address, name: name)
        let version = ModelVersionRecord(collectionID: collectionID, modelName: name, blobID: address, size: found.size, keyID: keyID, createdBy: actor)
        do {
            // In a savepoint: this runs inside the deployment's transaction, which PostgreSQL would
            // otherwise abort at the violation, failing the look-up below.
            try await UniqueViolation.savepoint(on: database) { try await version.create(on: database) }
            return try version.requireID()
        } catch where UniqueViolation.matches(error) {
            // Another request created the same version at the same time.
            guard let raced = try await ModelVersionRecord.query(on: database)
                .filter(\.$collection.$id == collectionID).filter(\.$modelName == name).filter(\.$blobID == address).first()
            else { throw error }
            return try raced.requireID()
        }
    }

    /// Restarts the blob's grace period, once the blob is known to be this team's model. On
    /// PostgreSQL the updated row stays locked until the caller's transaction ends, and blob
    /// collection's delete (which cannot see a reference not yet committed) waits for it, then
    /// finds the blob within its grace period and keeps it.
    /// 422 `unknown_blob` when the row is gone (collected between the look-up and this update):
    /// the deployment must not commit a reference to it.
    private func markUsed(_ address: String, name: String) async throws {
        guard let sql = database as? any SQLDatabase else { return }
        let marked = try await sql.raw("UPDATE blobs SET last_uploaded_at = \(bind: Date()) WHERE id = \(bind: address) RETURNING id").all()
        guard !marked.isEmpty else {
            throw APIError(.unprocessableEntity, "unknown_blob", "\(name): the server has no blob \(address.prefix(12))…; upload it first")
        }
    }
}
