import Foundation
import GRDB
import GRDBSQLite

/// A column of a fetched row read in place: for a row that GRDB reads straight from its SQLite
/// statement, the bytes of a BLOB or TEXT are SQLite's own, without the `Data` and the boxed
/// `DatabaseValue` that `row[column]` makes for every value. The read path opens two or more values
/// per row; those copies were a fifth of its cost.
///
/// Read with `row.decode(BorrowedValue.self, forColumn:)`, which GRDB answers from the statement for
/// statement rows and from the row's stored value otherwise (``owned(_:)``).
///
/// - Warning: The bytes of ``text(_:)`` and ``blob(_:)`` are valid only until the statement steps
///   or the same column is read as another type; use them at once, while decoding the row, and keep
///   nothing that points into them.
enum BorrowedValue {
    /// The row has no such column.
    case missing
    case null
    case integer(Int64)
    case real(Double)
    /// TEXT, as SQLite stores it (UTF-8).
    case text(UnsafeRawBufferPointer)
    case blob(UnsafeRawBufferPointer)
    /// A row that is not read from a statement (copied, built from a dictionary): its stored value.
    case owned(DatabaseValue)
}

// GRDB's documentation asks conforming types not to customize `fromMissingColumn` and
// `fromStatement`: they make a missing column and NULL errors. This type is private to SealedFields
// and customizes both on purpose, so that one lookup of the column answers whether the row has it,
// whether it is NULL and what it holds, without throwing on the way.
extension BorrowedValue: DatabaseValueConvertible, StatementColumnConvertible {
    static func fromMissingColumn() -> BorrowedValue? { .missing }

    static func fromStatement(_ sqliteStatement: SQLiteStatement, atUncheckedIndex index: CInt) -> BorrowedValue? {
        BorrowedValue(sqliteStatement: sqliteStatement, index: index)
    }

    init(sqliteStatement: SQLiteStatement, index: CInt) {
        switch sqlite3_column_type(sqliteStatement, index) {
        case SQLITE_NULL:
            self = .null
        case SQLITE_INTEGER:
            self = .integer(sqlite3_column_int64(sqliteStatement, index))
        case SQLITE_FLOAT:
            self = .real(sqlite3_column_double(sqliteStatement, index))
        case SQLITE_TEXT:
            // The pointer first, then the count: SQLite's documented order.
            let bytes = sqlite3_column_text(sqliteStatement, index)
            self = .text(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(sqliteStatement, index))))
        default:
            let bytes = sqlite3_column_blob(sqliteStatement, index)
            self = .blob(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(sqliteStatement, index))))
        }
    }

    static func fromDatabaseValue(_ dbValue: DatabaseValue) -> BorrowedValue? { .owned(dbValue) }

    /// The value as GRDB stores it (never written by SealedFields: the conformance exists to read).
    var databaseValue: DatabaseValue {
        switch self {
        case .missing, .null: return .null
        case .integer(let value): return value.databaseValue
        case .real(let value): return value.databaseValue
        case .text(let bytes): return String(decoding: bytes, as: UTF8.self).databaseValue
        case .blob(let bytes): return Data(bytes).databaseValue
        case .owned(let value): return value
        }
    }
}
