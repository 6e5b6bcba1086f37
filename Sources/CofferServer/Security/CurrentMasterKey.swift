import Fluent
import Foundation
import SQLKit
import Vapor

/// The database's record of which master key wraps its keys (``CurrentMasterKeyRecord``), and the
/// rule that keeps every stored key openable by it: a wrapped key is written only in a write
/// transaction that found the record naming the master key it was wrapped with (``require(_:on:)``),
/// and a rotation changes the record in the transaction that re-wraps the keys.
///
/// Holding: PostgreSQL, the writer reads the row `FOR SHARE` and the rotation takes the tables of
/// wrapped keys and the record `IN EXCLUSIVE MODE`, so each waits for the other to end and a writer
/// that waited reads the record the rotation left; SQLite, ``Database/writeTransaction(_:)`` holds
/// the write lock already. An instance still running with the master key a rotation replaced is
/// refused, or its key is stored before the rotation reads the rows and is re-wrapped with them.
enum CurrentMasterKey {
    /// The master key ID recorded, nil when none is; with `holding`, the record is held until the
    /// caller's transaction ends (a rotation waits for it).
    static func read(on db: any Database, holding: Bool = false) async throws -> String? {
        let sql = try db.sql()
        let lock = holding && sql.dialect.name == "postgresql" ? " FOR SHARE" : ""
        let row = try await sql.raw("""
            SELECT master_key_id FROM \(unsafeRaw: CurrentMasterKeyRecord.schema) \
            WHERE id = \(bind: CurrentMasterKeyRecord.only)\(unsafeRaw: lock)
            """).first()
        return try row?.decode(column: "master_key_id", as: String.self)
    }

    /// Refuses (``StaleMasterKey``) unless the record names `key`; called in the write transaction
    /// that stores something wrapped with `key`, before it does, and holds the record until it ends.
    static func require(_ key: MasterKey, on tx: any Database) async throws {
        let recorded = try await read(on: tx, holding: true)
        guard recorded == key.id else { throw StaleMasterKey(held: key.id, recorded: recorded) }
    }

    /// At start: checks that the stored keys are wrapped by `key` (``standing(of:on:holding:)``),
    /// records it when no master key is recorded yet (a new database, or the first start after
    /// migration 015) and corrects a record the stored keys contradict; refuses a start with any
    /// other key than the one recorded. Returns a line for the log when it corrected the record.
    @discardableResult
    static func claim(_ key: MasterKey, on database: any Database) async throws -> String? {
        try await database.writeTransaction { db -> String? in
            switch try await Self.standing(of: key, on: db, holding: true) {
            case .current:
                return nil
            case .outdated(let recorded):
                try await Self.record(key, on: db)
                return "every stored key is wrapped by master key \(key.id), but master key \(recorded) was recorded (a rotation by an older version?): recorded \(key.id)"
            case .unrecorded:
                // Instances starting together on one PostgreSQL: the first row stays, and the
                // others compare their key with it below.
                try await db.sql().insert(into: CurrentMasterKeyRecord.schema).columns("id", "master_key_id", "recorded_at")
                    .values(SQLBind(CurrentMasterKeyRecord.only), SQLBind(key.id), SQLBind(Date()))
                    .ignoringConflicts(with: ["id"]).run()
                let recorded = try await Self.read(on: db, holding: true)
                guard recorded == key.id else {
                    throw MasterKeyMismatch("the database records", needed: recorded ?? "(none recorded)", given: key)
                }
                return nil
            }
        }
    }

    /// Records `key` as the one the stored keys are wrapped by; in a rotation's transaction, which
    /// holds the record already. An existing row is updated in place: a writer waiting for it
    /// (PostgreSQL, `FOR SHARE`) then reads the new value.
    static func record(_ key: MasterKey, on tx: any Database) async throws {
        if try await read(on: tx) == nil {
            try await CurrentMasterKeyRecord(masterKeyID: key.id).create(on: tx)
        } else {
            try await CurrentMasterKeyRecord.query(on: tx).filter(\.$id == CurrentMasterKeyRecord.only)
                .set(\.$masterKeyID, to: key.id).set(\.$recordedAt, to: Date()).update()
        }
    }
}
