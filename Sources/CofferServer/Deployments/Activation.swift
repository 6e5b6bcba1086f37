import Fluent
import FluentSQLiteDriver
import Foundation

/// Makes a deployment the active one of its collection, in one transaction.
///
/// The transaction starts by bumping the collection's sequence number, which takes the row's lock
/// (PostgreSQL) or the database's write lock (SQLite): concurrent activations of one collection run
/// one after the other, each with its own sequence number, and exactly one deployment ends active.
enum Activation {
    /// Activates `deploymentID` as of `now`; returns the new sequence number. A transaction that
    /// loses a lock race (SQLite busy, a PostgreSQL deadlock) is tried again. With `checked`, the
    /// deployment must still have that spec (see ``apply(_:in:kind:actor:at:checked:on:)``).
    static func activate(_ deploymentID: UUID, in collectionID: UUID, kind: String, actor: String, at now: Date,
                         checked: DeploymentSpec? = nil, on db: any Database) async throws -> Int64 {
        try await db.writeTransaction { tx in
            try await apply(deploymentID, in: collectionID, kind: kind, actor: actor, at: now, checked: checked, on: tx)
        }
    }

    /// ``activate(_:in:kind:actor:at:checked:on:)``'s steps inside the caller's transaction `tx`. A
    /// staged rollout of the collection that is still running ends as superseded.
    ///
    /// `checked` is the spec the caller found ready (its models stored, their keys live). Read
    /// under the collection's lock, a deployment whose spec is no longer that one — a draft edited
    /// between the check and this transaction — is refused (409), and nothing changes: activated,
    /// the edit's models would reach devices unchecked, and their keys would not be deliverable.
    static func apply(_ deploymentID: UUID, in collectionID: UUID, kind: String, actor: String, at now: Date,
                      checked: DeploymentSpec? = nil, on tx: any Database) async throws -> Int64 {
        let sequence = try await bump(collectionID, to: deploymentID, kind: kind, actor: actor, on: tx)
        // Read once, under the lock the bump took: checked here, its keys recorded below (neither
        // reads the status the updates below change).
        let deployment = try await DeploymentRecord.find(deploymentID, on: tx)
        if let checked {
            guard let deployment else { throw APIError.notFound("deployment") }
            guard deployment.spec == checked else {
                throw APIError.conflict("deployment \(deployment.name) changed while it was being activated; look at it and activate it again")
            }
        }
        try await DeploymentRecord.query(on: tx)
            .filter(\.$collection.$id == collectionID).filter(\.$status == .active).filter(\.$id != deploymentID)
            .set(\.$status, to: .archived).update()
        try await DeploymentRecord.query(on: tx)
            .filter(\.$id == deploymentID)
            .set(\.$status, to: .active).set(\.$activatedAt, to: now).update()
        try await RolloutRecord.query(on: tx).filter(\.$collection.$id == collectionID).filter(\.$state == .staged)
            .set(\.$state, to: .superseded).update()
        // The keys it uses become deliverable to the collection's apps with the activation, not before.
        if let deployment {
            try await CollectionKeys.record(deployment, on: tx)
        }
        return sequence
    }

    /// Gives the collection its next sequence number with `deploymentID` active (a stage change
    /// keeps the active deployment and still needs a new number: what devices get changes), and
    /// records it in the activation history. Inside the caller's transaction `tx`.
    static func bump(_ collectionID: UUID, to deploymentID: UUID, kind: String, actor: String, on tx: any Database) async throws -> Int64 {
        let sql = try tx.sql()
        guard let row = try await sql.raw("""
            UPDATE collections SET sequence = sequence + 1, active_deployment_id = \(bind: deploymentID) \
            WHERE id = \(bind: collectionID) RETURNING sequence
            """).first()
        else { throw APIError.notFound("collection") }
        let sequence = try row.decode(column: "sequence", as: Int64.self)
        try await ActivationRecord(collectionID: collectionID, deploymentID: deploymentID, sequence: sequence, kind: kind, actor: actor).create(on: tx)
        return sequence
    }
}
