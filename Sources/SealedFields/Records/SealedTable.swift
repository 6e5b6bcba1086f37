import Foundation
import GRDB

/// What SealedFields needs to know about a table: which columns are sealed, which columns identify a row
/// (bound into every ciphertext), and which columns hold blind indexes. Made once per record type, and
/// shared (a class: every record read passes it on, and a reference costs one retain, not one per field).
final class SealedTable: Sendable {
    let name: String
    let sealedColumns: [String]
    let identityColumns: [String]
    let blindIndexColumns: [String: String]
    /// `AssociatedData.prefix(table:column:)` of each sealed column, in `sealedColumns` order.
    let prefixes: [[UInt8]]
    /// `sealedColumns` lower-cased (as GRDB compares column names), in the same order.
    let lowercasedSealedColumns: [String]

    private static let cache = LockedValue<[ObjectIdentifier: SealedTable]>([:])

    static func of<Record: SealedRecord>(_ type: Record.Type) -> SealedTable {
        if let table = cache.get()[ObjectIdentifier(type)] { return table }
        let table = SealedTable(
            name: Record.databaseTableName, sealedColumns: Record.sealedColumns,
            identityColumns: Record.sealedIdentityColumns, blindIndexColumns: Record.blindIndexColumns)
        cache.update { $0[ObjectIdentifier(type)] = table }
        return table
    }

    init(name: String, sealedColumns: [String], identityColumns: [String], blindIndexColumns: [String: String]) {
        self.name = name
        self.sealedColumns = sealedColumns
        self.identityColumns = identityColumns
        self.blindIndexColumns = blindIndexColumns
        prefixes = sealedColumns.map { AssociatedData.prefix(table: name, column: $0) }
        lowercasedSealedColumns = sealedColumns.map { $0.lowercased() }
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

    /// The identity of a fetched row.
    func identity(of row: Row) throws -> [DatabaseValue] {
        try identity { row.hasColumn($0) ? row[$0] as DatabaseValue : nil }
    }

    /// ``AssociatedData/identityFields(_:)`` of a fetched row, read with GRDB's untyped subscript.
    func identityFields(of row: Row) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for column in identityColumns {
            guard let value = row[column] else { throw SealedFieldsError.missingIdentity(table: name, column: column) }
            AssociatedData.appendIdentityField(value.databaseValue, to: &bytes)
        }
        return bytes
    }

    /// Replaces the plain values of sealed columns in `container` by ciphertexts, and fills blind indexes.
    func seal(_ container: inout PersistenceContainer, with store: SealedFieldsStore) throws {
        let identity = AssociatedData.identityFields(try identity { container[$0]?.databaseValue })
        for (column, prefix) in zip(sealedColumns, prefixes) {
            guard let plain = container[column]?.databaseValue else { continue }
            container[column] = try store.seal(plain, AssociatedData(prefix: prefix, identityFields: identity))
            if let indexColumn = blindIndexColumns[column] {
                container[indexColumn] = BlindIndex.compute(PlainValue.encode(plain), with: store.keyring.active, prefix: prefix)
            }
        }
    }

    /// The row with sealed columns replaced by their plain values. Columns are then accessed by name.
    func open(_ row: Row, with store: SealedFieldsStore) throws -> Row {
        guard let opened = try OpenedRow(row, of: self, with: store, as: nil) else { return row }
        // Typed as Row's initializer takes it, so that GRDB does not convert the whole dictionary again.
        var values: [String: (any DatabaseValueConvertible)?] = [:]
        values.reserveCapacity(row.count)
        for (column, value) in row { values[column] = value }
        for opened in opened.columns {
            let (column, value) = (opened.name, opened.value)
            // The row spells the column as the query did; it is usually the declared spelling.
            let key = values.keys.contains(column) ? column
                : values.keys.first { $0.caseInsensitiveCompare(column) == .orderedSame } ?? column
            values[key] = value
        }
        return Row(values)
    }
}
