import Foundation
import GRDB

/// What SealedFields needs to know about a table: which columns are sealed, which columns identify a row
/// (bound into every ciphertext), and which columns hold blind indexes.
struct SealedTable: Sendable {
    let name: String
    let sealedColumns: [String]
    let identityColumns: [String]
    let blindIndexColumns: [String: String]

    init<Record: SealedRecord>(_ type: Record.Type) {
        name = Record.databaseTableName
        sealedColumns = Record.sealedColumns
        identityColumns = Record.sealedIdentityColumns
        blindIndexColumns = Record.blindIndexColumns
    }

    /// The identity values of a record, each of which must be present and not NULL.
    func identity(_ value: (String) -> DatabaseValue?) throws -> [DatabaseValue] {
        try identityColumns.map { column in
            guard let identity = value(column), !identity.isNull else {
                throw SealedFieldsError.missingIdentity(table: name, column: column)
            }
            return identity
        }
    }

    /// Replaces the plain values of sealed columns in `container` by ciphertexts, and fills blind indexes.
    func seal(_ container: inout PersistenceContainer, with store: SealedFieldsStore) throws {
        let identity = try identity { container[$0]?.databaseValue }
        for column in sealedColumns {
            guard let plain = container[column]?.databaseValue else { continue }
            container[column] = try store.seal(plain, table: name, column: column, identity: identity)
            if let indexColumn = blindIndexColumns[column] {
                container[indexColumn] = store.blindIndex(plain, table: name, column: column)
            }
        }
    }

    /// The row with sealed columns replaced by their plain values. Columns are then accessed by name.
    func open(_ row: Row, with store: SealedFieldsStore) throws -> Row {
        guard sealedColumns.contains(where: { row.hasColumn($0) }) else { return row }
        let identity = try identity { row.hasColumn($0) ? row[$0] as DatabaseValue : nil }
        let sealed = Dictionary(sealedColumns.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        var values: [String: DatabaseValue] = [:]
        values.reserveCapacity(row.count)
        for (column, value) in row {
            if let sealedColumn = sealed[column.lowercased()] {
                values[column] = try store.open(value, table: name, column: sealedColumn, identity: identity)
            } else {
                values[column] = value
            }
        }
        return Row(values)
    }
}
