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

    /// The tables made so far, by record type. A list: an app has a few sealed record types, and
    /// comparing a few identifiers costs less than hashing one, which every record read does.
    private static let cache = LockedValue<[(type: ObjectIdentifier, table: SealedTable)]>([])

    static func of<Record: SealedRecord>(_ type: Record.Type) -> SealedTable {
        let id = ObjectIdentifier(type)
        if let table = cache.read({ $0.first { $0.type == id }?.table }) { return table }
        let table = SealedTable(
            name: Record.databaseTableName, sealedColumns: Record.sealedColumns,
            identityColumns: Record.sealedIdentityColumns, blindIndexColumns: Record.blindIndexColumns)
        cache.update { tables in
            if !tables.contains(where: { $0.type == id }) { tables.append((id, table)) }
        }
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

    /// ``AssociatedData/identityFields(_:)`` of a fetched row, read in place (``BorrowedValue``).
    func identityFields(of row: Row) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for column in identityColumns {
            let value = try identityValue(column, of: row)
            AssociatedData.appendIdentityField(value, to: &bytes)
        }
        return bytes
    }

    /// Calls `body` with ``identityFields(of:)`` assembled in a buffer on the stack: the read path
    /// does this for every row, and an array was an allocation per row. An identity too long for
    /// the buffer is assembled in an array instead.
    func withIdentityFields<Result>(of row: Row, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        try withUnsafeTemporaryAllocation(byteCount: Self.identityBufferSize, alignment: 1) { buffer in
            var count = 0
            for column in identityColumns {
                let value = try identityValue(column, of: row)
                guard AssociatedData.writeIdentityField(value, into: buffer, at: &count) else {
                    return try identityFields(of: row).withUnsafeBytes(body)
                }
            }
            return try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// The bytes ``withIdentityFields(of:_:)`` keeps on the stack: a UUID or integer identity takes
    /// 13 to 21 of them, and a short text identity fits as well.
    static let identityBufferSize = 256

    /// One identity value of a fetched row, which must be present and not NULL.
    private func identityValue(_ column: String, of row: Row) throws -> BorrowedValue {
        let value = try row.decode(BorrowedValue.self, forColumn: column)
        switch value {
        case .missing, .null:
            throw SealedFieldsError.missingIdentity(table: name, column: column)
        case .owned(let owned) where owned.isNull:
            throw SealedFieldsError.missingIdentity(table: name, column: column)
        default:
            return value
        }
    }

    /// Replaces the plain values of sealed columns in `container` by ciphertexts, and fills blind indexes.
    ///
    /// A sealed column the record does not encode at all (a misspelt name, or a property name where
    /// the database's column is named otherwise) is refused: skipped, its value would be written in
    /// the clear under the column the record does encode. (GRDB encodes a nil property as NULL, so a
    /// column that is really there is never missing.)
    func seal(_ container: inout PersistenceContainer, with store: SealedFieldsStore) throws {
        let identity = AssociatedData.identityFields(try identity { container[$0]?.databaseValue })
        for (column, prefix) in zip(sealedColumns, prefixes) {
            guard let plain = container[column]?.databaseValue else { throw SealedFieldsError.unknownColumn(table: name, column: column) }
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
            let (column, value) = (sealedColumns[opened.index], opened.value)
            // The row spells the column as the query did; it is usually the declared spelling.
            let key = values.keys.contains(column) ? column
                : values.keys.first { $0.caseInsensitiveCompare(column) == .orderedSame } ?? column
            values[key] = value
        }
        return Row(values)
    }
}
