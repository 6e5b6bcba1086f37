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
    public static func filter(sealed column: String, equals value: some DatabaseValueConvertible) throws
        -> QueryInterfaceRequest<Self>
    {
        try all().filter(sealedEquals(column, value))
    }
}

extension QueryInterfaceRequest where RowDecoder: SealedRecord {
    /// This request, narrowed to records whose sealed `column` equals `value` (blind index).
    public func filter(sealed column: String, equals value: some DatabaseValueConvertible) throws -> Self {
        try filter(RowDecoder.sealedEquals(column, value))
    }
}
