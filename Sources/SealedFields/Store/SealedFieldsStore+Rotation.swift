import Foundation
import GRDB

extension SealedFieldsStore {
    /// Adds a new random data key and makes it the one that writes. Older keys stay readable, so the app
    /// keeps working while ``reencrypt(_:batchSize:progress:)`` moves rows to the new key.
    ///
    /// The keys are read again in the same transaction, so keys another store on the same file
    /// added meanwhile are kept.
    ///
    /// - Returns: the new key version.
    /// - Throws: ``SealedFieldsError/keyChanged`` when another store changed the passphrase or key
    ///   since this one opened (nothing is written: open the store again);
    ///   ``SealedFieldsError/corruptKeyTables`` when the newest version is already the last one.
    @discardableResult
    public func rotate() throws -> UInt32 {
        let kek = kek.get()
        let (key, keys) = try writer.write { db -> (DataKey, [UInt32: DataKey]) in
            guard case let (meta, rows)? = try KeyTables.load(db) else { throw SealedFieldsError.corruptKeyTables }
            // A key wrapped under a key-encryption key the database no longer has could never be read.
            guard kek.matches(verifier: meta.verifier) else { throw SealedFieldsError.keyChanged }
            guard let newest = rows.map(\.version).max(), newest < UInt32.max else { throw SealedFieldsError.corruptKeyTables }
            var (keys, _) = try KeyTables.unwrap(rows, with: kek)
            let key = DataKey.random(version: newest + 1)
            try KeyTables.saveKey(db, version: key.version, wrapped: kek.wrap(key), active: true)
            keys[key.version] = key
            return (key, keys)
        }
        keyring.replace(keys: keys, active: key.version)
        return key.version
    }

    /// Re-seals, with the active key, every value and blind index of `Record`'s table that uses an older key.
    ///
    /// Walks the table in `batchSize` rows per transaction, by rowid. After each batch it calls `progress`;
    /// returning false stops the walk there. Run it again to resume: rows already on the active key are
    /// skipped, so a walk interrupted at any point (even by a crash) loses nothing.
    @discardableResult
    public func reencrypt<Record: SealedRecord>(
        _ type: Record.Type, batchSize: Int = 500,
        progress: (SealedFieldsProgress) -> Bool = { _ in true }
    ) throws -> SealedFieldsProgress {
        let table = SealedTable.of(type)
        let active = keyring.active
        let hex = active.version.bigEndianHex
        let stale = (table.sealedColumns.map { "substr(\($0.quotedDatabaseIdentifier), 3, 4) IS NOT X'\(hex)'" }
            + table.blindIndexColumns.values.map { "substr(\($0.quotedDatabaseIdentifier), 2, 4) IS NOT X'\(hex)'" })
            .joined(separator: " OR ")
        return try walk(table, where: stale, batchSize: batchSize, progress: progress) { row, values in
            let identity = try table.identity(of: row)
            for column in table.sealedColumns {
                let plain = try self.open(row[column], table: table.name, column: column, identity: identity)
                values[column] = try SealedValue.seal(
                    PlainValue.encode(plain), with: active,
                    associatedData: AssociatedData(table: table.name, column: column, identity: identity)
                ).databaseValue
                if let indexColumn = table.blindIndexColumns[column] {
                    values[indexColumn] = BlindIndex.compute(
                        PlainValue.encode(plain), with: active, table: table.name, column: column
                    ).databaseValue
                }
            }
        }
    }

    /// Deletes data key `version` after checking, in the same transaction, that no column of any table
    /// still holds a value sealed or indexed with it.
    ///
    /// - Throws: ``SealedFieldsError/keyInUse(version:values:)`` when something still uses it,
    ///   ``SealedFieldsError/activeKey(version:)`` for the key that writes.
    public func retire(version: UInt32) throws {
        guard version != keyring.active.version else { throw SealedFieldsError.activeKey(version: version) }
        _ = try keyring.key(version: version)
        let hex = version.bigEndianHex
        try writeErasingOldKeys { db in
            var uses = 0
            let tables = try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master
                WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'sealedfields\\_%' ESCAPE '\\'
                """)
            for table in tables {
                for column in try db.columns(in: table) {
                    let c = column.name.quotedDatabaseIdentifier
                    uses += try Int.fetchOne(db, sql: """
                        SELECT COUNT(*) FROM \(table.quotedDatabaseIdentifier) WHERE typeof(\(c)) = 'blob' AND (
                          (substr(\(c), 1, 2) = X'0101' AND substr(\(c), 3, 4) = X'\(hex)')
                          OR (length(\(c)) = \(BlindIndex.count) AND substr(\(c), 1, 1) = X'02' AND substr(\(c), 2, 4) = X'\(hex)'))
                        """) ?? 0
                }
            }
            guard uses == 0 else { throw SealedFieldsError.keyInUse(version: version, values: uses) }
            try db.execute(sql: "DELETE FROM \(KeyTables.keys) WHERE version = ?", arguments: [Int64(version)])
        }
        let keys = Dictionary(uniqueKeysWithValues: keyring.all.filter { $0.version != version }.map { ($0.version, $0) })
        keyring.replace(keys: keys, active: keyring.active.version)
    }
}

extension UInt32 {
    var bigEndianHex: String {
        (0..<4).map { String(format: "%02X", UInt8(truncatingIfNeeded: self >> (24 - 8 * $0))) }.joined()
    }
}
