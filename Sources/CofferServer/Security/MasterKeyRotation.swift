import Fluent
import Foundation
import Vapor

/// Re-wraps every model key and the manifest-signing key from the current master key to a new one, in one transaction.
///
/// Run with the servers stopped (`coffer-server rotate-master-key`): afterwards only the new
/// master key opens the model keys, and a server started with the old one refuses to start.
enum MasterKeyRotation {
    /// Re-wraps all rows; returns how many.
    static func rotate(on database: any Database, from old: MasterKey, to new: MasterKey) async throws -> Int {
        try await database.transaction { db in
            let rows = try await KeyRecord.query(on: db).all()
            for row in rows {
                guard row.masterKeyID == old.id else {
                    throw ServerSetupError("model key \(row.id ?? "?") is wrapped by master key \(row.masterKeyID), not the current \(old.id); nothing was changed")
                }
                let material = try old.unwrap(row.wrappedKey, keyID: row.requireID(), teamID: row.$team.id)
                row.wrappedKey = try new.wrap(material, keyID: row.requireID(), teamID: row.$team.id)
                row.masterKeyID = new.id
                try await row.update(on: db)
            }
            for row in try await SigningKeyRecord.query(on: db).all() {
                let binding = ManifestSigner.binding(keyID: row.keyID)
                row.wrappedKey = try new.seal(try old.open(row.wrappedKey, binding: binding), binding: binding)
                row.masterKeyID = new.id
                try await row.update(on: db)
            }
            return rows.count
        }
    }

    /// Refuses to run with a master key that did not wrap the stored model keys and signing key.
    static func checkMatches(_ key: MasterKey, on database: any Database) async throws {
        if let other = try await SigningKeyRecord.query(on: database).filter(\.$masterKeyID != key.id).first() {
            throw ServerSetupError(
                "the manifest-signing key is wrapped by master key \(other.masterKeyID), but this server was given master key \(key.id); set COFFER_MASTER_KEY or DATA_DIR/master.key to the right key, or finish the rotation")
        }
        if let other = try await KeyRecord.query(on: database).filter(\.$masterKeyID != key.id).first() {
            throw ServerSetupError(
                "the model keys are wrapped by master key \(other.masterKeyID), but this server was given master key \(key.id); set COFFER_MASTER_KEY or DATA_DIR/master.key to the right key, or finish the rotation")
        }
    }
}

extension Server {
    /// `coffer-server rotate-master-key`: re-wraps every model key under `newKeyBase64`, then, when
    /// the current key lives in `DATA_DIR/master.key`, replaces that file (0600). With
    /// COFFER_MASTER_KEY the operator sets the new value before restarting.
    public static func rotateMasterKey(_ configuration: ServerConfiguration, newKeyBase64: String) async throws -> String {
        let path = configuration.dataDirectory + "/master.key"
        try DataFolder.prepare(configuration.dataDirectory)
        let old = try MasterKey.load(base64: configuration.masterKeyBase64, path: path)
        let new = try MasterKey(base64: newKeyBase64)
        let app = try await Application.make(Environment(name: "production", arguments: ["coffer-server"]))
        do {
            try await configureDatabase(app, configuration)
            let count = try await MasterKeyRotation.rotate(on: app.db, from: old, to: new)
            if configuration.masterKeyBase64 == nil {
                try SecretFile.replace(at: path, contents: Data((newKeyBase64.trimmingCharacters(in: .whitespacesAndNewlines) + "\n").utf8))
            }
            try await app.asyncShutdown()
            return "re-wrapped \(count) model keys from master key \(old.id) to \(new.id)"
                + (configuration.masterKeyBase64 == nil ? "; \(path) now holds the new key" : "; set COFFER_MASTER_KEY to the new key before restarting")
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
    }
}
