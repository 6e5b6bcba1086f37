import Foundation
import GRDB

extension SealedFieldsStore {
    /// Seals, in place, the values of `Record`'s sealed columns that are still plaintext (an existing
    /// app adopting SealedFields), and fills their blind indexes.
    ///
    /// Walks the table like ``reencrypt(_:batchSize:progress:)``: in batches, stoppable from `progress`,
    /// resumable by running it again. A value that looks like a SealedFields ciphertext but does not
    /// authenticate is an error, never re-sealed as if it were plaintext.
    @discardableResult
    public func sealPlaintext<Record: SealedRecord>(
        _ type: Record.Type, batchSize: Int = 500,
        progress: (SealedFieldsProgress) -> Bool = { _ in true }
    ) throws -> SealedFieldsProgress {
        let table = SealedTable.of(type)
        let notSealed = (table.sealedColumns.map { c in
            let c = c.quotedDatabaseIdentifier
            return "typeof(\(c)) IS NOT 'blob' OR length(\(c)) < \(SealedValue.minimumCount) OR substr(\(c), 1, 2) IS NOT X'0101'"
        } + table.blindIndexColumns.values.map { "\($0.quotedDatabaseIdentifier) IS NULL" })
            .joined(separator: " OR ")
        return try walk(table, where: notSealed, batchSize: batchSize, progress: progress) { row, values in
            let identity = try table.identity(of: row)
            for column in table.sealedColumns {
                let stored: DatabaseValue = row[column]
                let plain: DatabaseValue
                if case .blob(let blob) = stored.storage, SealedValue.keyVersion(of: blob) != nil {
                    plain = try self.open(stored, table: table.name, column: column, identity: identity)
                } else {
                    plain = stored
                    values[column] = try self.seal(plain, table: table.name, column: column, identity: identity).databaseValue
                }
                if let indexColumn = table.blindIndexColumns[column] {
                    values[indexColumn] = self.blindIndex(plain, table: table.name, column: column).databaseValue
                }
            }
        }
    }
}
