import Fluent
import Foundation
import SQLKit
import Vapor

/// Re-wraps every model key and the manifest-signing key from the current master key to a new one,
/// and records the new one as current (``CurrentMasterKeyRecord``), in one transaction.
///
/// Safe with instances running: the transaction holds the tables of wrapped keys against writers
/// (PostgreSQL `LOCK TABLE … IN EXCLUSIVE MODE`; SQLite's write lock), and a writer stores a key only
/// while the record names the master key it wraps with (``CurrentMasterKey/require(_:on:)``), so an
/// instance still holding the old key stores nothing the new one cannot open. It opens no key with
/// the new master key though: restart every instance with the new key.
enum MasterKeyRotation {
    /// Re-wraps all rows and records `new`; returns how many model keys. With `keyFile`, `new` is
    /// written as its pending key (``PendingMasterKey``) once the rows are re-wrapped, before the
    /// commit: the key the committed rows need is on disk whatever happens next.
    static func rotate(on database: any Database, from old: MasterKey, to new: MasterKey, keyFile: String? = nil) async throws -> Int {
        try await database.writeTransaction { db in
            try await Self.holdWrappedKeys(on: db)
            let recorded = try await CurrentMasterKey.read(on: db)
            guard recorded == nil || recorded == old.id else {
                throw ServerSetupError("the stored keys are wrapped by master key \(recorded ?? ""), not the current \(old.id); nothing was changed")
            }
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
                guard row.masterKeyID == old.id else {
                    throw ServerSetupError("the manifest-signing key is wrapped by master key \(row.masterKeyID), not the current \(old.id); nothing was changed")
                }
                let binding = ManifestSigner.binding(keyID: row.keyID)
                row.wrappedKey = try new.seal(try old.open(row.wrappedKey, binding: binding), binding: binding)
                row.masterKeyID = new.id
                try await row.update(on: db)
            }
            try await CurrentMasterKey.record(new, on: db)
            if let keyFile { try PendingMasterKey.write(new, for: keyFile) }
            return rows.count
        }
    }

    /// Holds the record and the tables of wrapped keys until the transaction ends. PostgreSQL:
    /// `EXCLUSIVE` lets reads (key deliveries) go on, waits for every transaction that writes one of
    /// the tables or holds the record `FOR SHARE` to end, and keeps new ones waiting; SQLite:
    /// ``Database/writeTransaction(_:)`` holds the write lock already.
    private static func holdWrappedKeys(on tx: any Database) async throws {
        let sql = try tx.sql()
        guard sql.dialect.name == "postgresql" else { return }
        try await sql.raw("""
            LOCK TABLE \(unsafeRaw: CurrentMasterKeyRecord.schema), \(unsafeRaw: KeyRecord.schema), \(unsafeRaw: SigningKeyRecord.schema) \
            IN EXCLUSIVE MODE
            """).run()
    }

    /// Refuses to run with a master key that did not wrap the stored model keys and signing key.
    /// - Throws: ``MasterKeyMismatch``, naming the master key they are wrapped by.
    static func checkMatches(_ key: MasterKey, on database: any Database) async throws {
        if let other = try await SigningKeyRecord.query(on: database).filter(\.$masterKeyID != key.id).first() {
            throw MasterKeyMismatch("the manifest-signing key is wrapped by", needed: other.masterKeyID, given: key)
        }
        if let other = try await KeyRecord.query(on: database).filter(\.$masterKeyID != key.id).first() {
            throw MasterKeyMismatch("the model keys are wrapped by", needed: other.masterKeyID, given: key)
        }
    }
}

extension Server {
    /// `coffer-server rotate-master-key`: re-wraps every model key under `newKeyBase64`. When the
    /// current key lives in `DATA_DIR/master.key`, the new one is written beside it
    /// (`master.key.next`, 0600) before the commit and renamed over it after; a rotation a crash
    /// interrupted is settled first (``PendingMasterKey``). With COFFER_MASTER_KEY the operator sets
    /// the new value before restarting.
    public static func rotateMasterKey(_ configuration: ServerConfiguration, newKeyBase64: String) async throws -> String {
        try await rotateMasterKey(configuration, to: MasterKey(base64: newKeyBase64))
    }

    /// ``rotateMasterKey(_:newKeyBase64:)`` with the new key read from `newKeyFile`
    /// (``MasterKey/readNew(at:)``) before the data folder or the database is touched: a file the
    /// CLI's rule for secret files refuses is refused here too.
    ///
    /// - Throws: ``RefusedSecretFile`` for a file of another account, or one others may read or write.
    public static func rotateMasterKey(_ configuration: ServerConfiguration, newKeyFile: String) async throws -> String {
        try await rotateMasterKey(configuration, to: MasterKey.readNew(at: newKeyFile))
    }

    private static func rotateMasterKey(_ configuration: ServerConfiguration, to new: MasterKey) async throws -> String {
        let path = configuration.dataDirectory + "/master.key"
        try DataFolder.prepare(configuration.dataDirectory)
        let app = try await Application.make(Environment(name: "production", arguments: ["coffer-server"]))
        do {
            try await configureDatabase(app, configuration)
            let message = try await rotate(app.db, configuration: configuration, keyFile: path, to: new)
            try await app.asyncShutdown()
            return message
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
    }

    private static func rotate(_ db: any Database, configuration: ServerConfiguration, keyFile path: String, to new: MasterKey) async throws -> String {
        let usesFile = configuration.masterKeyBase64 == nil
        if usesFile { _ = try await PendingMasterKey.settle(path, on: db) }
        // Never made here: a rotation in a folder with no key (a mistyped data folder, a service that
        // sets COFFER_MASTER_KEY run without it) would re-wrap nothing and report success.
        let old: MasterKey
        if let base64 = configuration.masterKeyBase64 {
            old = try MasterKey(base64: base64)
        } else if let existing = try MasterKey.read(at: path) {
            old = existing
        } else {
            throw ServerSetupError("\(path) does not exist: there is no master key to rotate (check COFFER_DATA_DIR, or set COFFER_MASTER_KEY as the server has it)")
        }
        guard old.id != new.id else {
            // Run again after a crash that the settling above finished, say.
            try await CurrentMasterKey.claim(new, on: db)
            return "master key \(new.id) is the current one already; nothing was re-wrapped"
        }
        let count: Int
        do {
            count = try await MasterKeyRotation.rotate(on: db, from: old, to: new, keyFile: usesFile ? path : nil)
        } catch {
            // Whether it committed is the database's to say (its answer may have been lost with the
            // connection): the pending file is settled by it now, or at the next start.
            if usesFile { _ = try? await PendingMasterKey.settle(path, on: db) }
            throw error
        }
        // Settled by the database's record, as a start does: a rotation run meanwhile (another
        // process) decides what goes where, not this one's memory.
        if usesFile {
            _ = try await PendingMasterKey.settle(path, on: db)
            guard try MasterKey.read(at: path)?.id == new.id else {
                throw ServerSetupError("the stored keys were re-wrapped to master key \(new.id), but another rotation replaced it since; "
                                       + "\(path) holds the current one")
            }
        }
        let kept = PendingMasterKey.previousPath(for: path, id: old.id)
        return "re-wrapped \(count) model keys from master key \(old.id) to \(new.id)"
            + (usesFile ? "; \(path) now holds the new key; the old one is kept in \(kept): remove it once a database backup taken after this rotation exists"
                        : "; set COFFER_MASTER_KEY to the new key before restarting, and keep the old one until a database backup taken after this rotation exists")
    }
}
