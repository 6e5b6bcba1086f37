import Foundation
import GRDB

extension SealedRecord {
    /// An SQL condition true for rows whose sealed `column` equals `value`, through its blind index.
    ///
    /// `value` is compared as GRDB stores it (`DatabaseValueConvertible`). The condition matches the
    /// index under every readable key, so search keeps working while a rotation is under way.
    public static func sealedEquals(_ column: String, _ value: some DatabaseValueConvertible) throws -> SQLExpression {
        guard let indexColumn = blindIndexColumns[column] else {
            throw SealedFieldsError.noBlindIndex(table: databaseTableName, column: column)
        }
        let indexes = try requireStore().blindIndexes(value.databaseValue, table: databaseTableName, column: column)
        return indexes.contains(Column(indexColumn))
    }

    /// Records whose sealed `column` equals `value`, found through its blind index.
    ///
    /// The index is not bound to its row (equal values must have equal indexes): someone who can
    /// write the database file can copy one row's index into another, and this request then finds
    /// that other row too. Where the answer decides something (a sign-in, a de-duplication), use
    /// ``fetchAll(_:sealed:equals:)``, which also checks each found record's opened value.
    public static func filter(sealed column: String, equals value: some DatabaseValueConvertible) throws
        -> QueryInterfaceRequest<Self>
    {
        try all().filter(sealedEquals(column, value))
    }
}

extension SealedRecord where Self: FetchableRecord {
    /// Records whose sealed `column` equals `value`: found through its blind index, then kept only
    /// when the value opened from the row (authenticated, bound to that row) equals `value`. A row
    /// whose index was copied from another is left out.
    public static func fetchAll(_ db: Database, sealed column: String, equals value: some DatabaseValueConvertible) throws -> [Self] {
        let wanted = value.databaseValue
        let table = SealedTable.of(Self.self)
        let store = try requireStore()
        return try Row.fetchAll(db, filter(sealed: column, equals: value)).compactMap { row in
            // Only the searched column is opened here; decoding the record opens the rest.
            let opened = try store.open(row[column], table: table.name, column: column, identity: table.identity(of: row))
            guard opened == wanted else { return nil }
            return try Self(row: row)
        }
    }
}

extension QueryInterfaceRequest where RowDecoder: SealedRecord {
    /// This request, narrowed to records whose sealed `column` equals `value` (blind index).
    public func filter(sealed column: String, equals value: some DatabaseValueConvertible) throws -> Self {
        try filter(RowDecoder.sealedEquals(column, value))
    }
}
