import GRDB

extension SealedFieldsStore {
    /// Runs `updates` in one transaction with SQLite's `secure_delete` on, then checkpoints a WAL, so that
    /// replaced key material (an old verifier, keys wrapped under an old passphrase, a retired key) is
    /// overwritten with zeros in the database file rather than left in free space.
    func writeErasingOldKeys<T>(_ updates: (Database) throws -> T) throws -> T {
        try writer.writeWithoutTransaction { db in
            let previous = try Int.fetchOne(db, sql: "PRAGMA secure_delete") ?? 0
            try db.execute(sql: "PRAGMA secure_delete = ON")
            defer { try? db.execute(sql: "PRAGMA secure_delete = \(previous)") }
            var result: T?
            try db.inTransaction {
                result = try updates(db)
                return .commit
            }
            if try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal" {
                // Best effort: readers may hold older frames; the next checkpoint overwrites them.
                _ = try? db.checkpoint(.truncate)
            }
            return result!
        }
    }
}
