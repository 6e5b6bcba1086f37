import Foundation
import GRDB

/// The two tables SealedFields keeps in the app's database.
///
/// `sealedfields_meta`: one row with the KDF (`scrypt` or `raw`), its parameters, the salt and the
/// verifier. `sealedfields_keys`: one row per data-key version with the wrapped key and its state
/// (`active` for the one that writes, `readable` for the others).
enum KeyTables {
    static let meta = "sealedfields_meta"
    static let keys = "sealedfields_keys"

    struct Meta {
        var kdf: String
        var scrypt: ScryptParameters?
        var salt: [UInt8]
        var verifier: Data
    }

    struct WrappedKey {
        var version: UInt32
        var wrapped: Data
        var isActive: Bool
    }

    /// Reads both tables without writing anything; nil when the database has no SealedFields tables yet.
    static func load(_ db: Database) throws -> (Meta, [WrappedKey])? {
        guard try db.tableExists(meta) else { return nil }
        guard try db.tableExists(keys),
              let row = try Row.fetchOne(db, sql: "SELECT * FROM \(meta) WHERE id = 1"),
              let kdf = row["kdf"] as String?, let salt = row["salt"] as Data?, let verifier = row["verifier"] as Data?
        else { throw SealedFieldsError.corruptKeyTables }
        var scrypt: ScryptParameters?
        if kdf == "scrypt" {
            guard let logN = row["scrypt_log_n"] as Int?, let r = row["scrypt_r"] as Int?, let p = row["scrypt_p"] as Int?,
                  let logN8 = UInt8(exactly: logN), let r32 = UInt32(exactly: r), let p32 = UInt32(exactly: p)
            else { throw SealedFieldsError.corruptKeyTables }
            scrypt = ScryptParameters(logN: logN8, r: r32, p: p32)
        } else if kdf != "raw" {
            throw SealedFieldsError.unsupportedFormat
        }
        let wrapped = try Row.fetchAll(db, sql: "SELECT version, wrapped, state FROM \(keys) ORDER BY version").map { row in
            guard let stored = row["version"] as Int64?, let version = UInt32(exactly: stored), let wrapped = row["wrapped"] as Data?
            else { throw SealedFieldsError.corruptKeyTables }
            return WrappedKey(version: version, wrapped: wrapped, isActive: (row["state"] as String?) == "active")
        }
        // Exactly one active key, and it is the newest: rotation always makes `max + 1` active, and
        // only the key-encryption key can wrap a newer one. The state column is not authenticated:
        // someone who can write the file could otherwise mark an old (perhaps leaked) key active
        // again and have every new value sealed under it.
        guard wrapped.filter(\.isActive).count == 1, wrapped.last?.isActive == true else { throw SealedFieldsError.corruptKeyTables }
        return (Meta(kdf: kdf, scrypt: scrypt, salt: [UInt8](salt), verifier: verifier), wrapped)
    }

    /// Every key of `rows` unwrapped with `kek`, and the active one's version.
    static func unwrap(_ rows: [WrappedKey], with kek: KeyEncryptionKey) throws -> (keys: [UInt32: DataKey], active: UInt32) {
        var keys: [UInt32: DataKey] = [:]
        var active: UInt32 = 0
        for row in rows {
            keys[row.version] = try kek.unwrap(row.wrapped, version: row.version)
            if row.isActive { active = row.version }
        }
        return (keys, active)
    }

    static func create(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE \(meta) (
              id INTEGER PRIMARY KEY CHECK (id = 1),
              format INTEGER NOT NULL,
              kdf TEXT NOT NULL,
              scrypt_log_n INTEGER, scrypt_r INTEGER, scrypt_p INTEGER,
              salt BLOB NOT NULL,
              verifier BLOB NOT NULL);
            CREATE TABLE \(keys) (
              version INTEGER PRIMARY KEY,
              wrapped BLOB NOT NULL,
              state TEXT NOT NULL CHECK (state IN ('active', 'readable')));
            """)
    }

    static func saveMeta(_ db: Database, _ meta: Meta) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO \(Self.meta) (id, format, kdf, scrypt_log_n, scrypt_r, scrypt_p, salt, verifier)
                VALUES (1, 1, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [meta.kdf, meta.scrypt.map { Int($0.logN) }, meta.scrypt.map { Int($0.r) },
                        meta.scrypt.map { Int($0.p) }, Data(meta.salt), meta.verifier])
    }

    static func saveKey(_ db: Database, version: UInt32, wrapped: Data, active: Bool) throws {
        if active {
            try db.execute(sql: "UPDATE \(keys) SET state = 'readable' WHERE state = 'active'")
        }
        try db.execute(
            sql: "INSERT OR REPLACE INTO \(keys) (version, wrapped, state) VALUES (?, ?, ?)",
            arguments: [Int64(version), wrapped, active ? "active" : "readable"])
    }
}
