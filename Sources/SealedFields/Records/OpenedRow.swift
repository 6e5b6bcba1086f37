import Foundation
import GRDB

/// A fetched row with the opened values of its sealed columns, each checked against the associated
/// data of its place (table, column, the row's identity), and which coding key reads which of them.
///
/// Every sealed column the row holds is opened, whether or not the record decodes it: a row with one
/// forged or misplaced value is refused whole. A class: it is the record's decoder (OpenedRow+Decoder),
/// and each of its containers shares it.
final class OpenedRow {
    let table: SealedTable
    let row: Row
    let store: SealedFieldsStore
    /// The record type being decoded, whose decoding strategies apply (nil when only the values are wanted).
    let recordType: (any (FetchableRecord & Decodable).Type)?
    /// The sealed columns the row holds, in ``SealedTable/sealedColumns`` order, opened.
    let columns: [OpenedColumn]
    /// GRDB's decoder of the fetched row, once a key needs it (see ``grdbDecoder()``).
    var fetchedRowDecoder: (any Decoder)?

    /// Nil when the row holds none of the table's sealed columns.
    init?(
        _ row: Row, of table: SealedTable, with store: SealedFieldsStore,
        as recordType: (any (FetchableRecord & Decodable).Type)?
    ) throws {
        let columns = try Self.openColumns(of: row, table: table, store: store)
        guard !columns.isEmpty else { return nil }
        self.table = table
        self.row = row
        self.store = store
        self.recordType = recordType
        self.columns = columns
    }

    /// The sealed columns `row` holds, opened; none when it holds none (then its identity is not read).
    private static func openColumns(of row: Row, table: SealedTable, store: SealedFieldsStore) throws -> [OpenedColumn] {
        // Lower-cased, a statement row finds a column in its first lookup. Read in place
        // (``BorrowedValue``): no copy of the ciphertext. The first sealed column the row holds is
        // found before its identity is read; its bytes stay valid while other columns are read.
        let names = table.lowercasedSealedColumns
        var index = 0
        var stored = BorrowedValue.missing
        while index < names.count {
            stored = try row.decode(BorrowedValue.self, forColumn: names[index])
            if case .missing = stored { index += 1 } else { break }
        }
        guard index < names.count else { return [] }
        return try table.withIdentityFields(of: row) { identity in
            var columns: [OpenedColumn] = []
            columns.reserveCapacity(names.count - index)
            var key: DataKey?
            while true {
                if case .missing = stored {} else {
                    let value = try open(stored, at: index, of: table, identityFields: identity, with: store, key: &key)
                    columns.append(OpenedColumn(index: index, value: value))
                }
                index += 1
                guard index < names.count else { return columns }
                stored = try row.decode(BorrowedValue.self, forColumn: names[index])
            }
        }
    }

    /// Opens the stored value of the sealed column at `index` of `table`, which must be a ciphertext.
    /// `key` keeps the data key of the row's previous value (a row's values usually share one); it
    /// is looked up before opening, so that no access to it stays open while the value is decrypted.
    private static func open(
        _ stored: BorrowedValue, at index: Int, of table: SealedTable, identityFields: UnsafeRawBufferPointer,
        with store: SealedFieldsStore, key: inout DataKey?
    ) throws -> DatabaseValue {
        switch stored {
        case .blob(let blob):
            let dataKey = try store.key(forSealed: blob, kept: &key, table: table.name, column: table.sealedColumns[index])
            return try store.open(
                sealed: blob, with: dataKey, prefix: table.prefixes[index], identityFields: identityFields,
                table: table.name, column: table.sealedColumns[index])
        case .owned(let owned):
            // A row not read from a statement (copied, adapted from a dictionary).
            guard case .blob(let blob) = owned.storage else {
                throw SealedFieldsError.notSealed(table: table.name, column: table.sealedColumns[index])
            }
            return try blob.withUnsafeBytes {
                try open(.blob($0), at: index, of: table, identityFields: identityFields, with: store, key: &key)
            }
        default:
            // NULL or any plain value where a ciphertext belongs is refused.
            throw SealedFieldsError.notSealed(table: table.name, column: table.sealedColumns[index])
        }
    }

    /// The declared name of an opened column.
    func name(of column: OpenedColumn) -> String { table.sealedColumns[column.index] }

    /// Where in ``columns`` is the opened column a coding key reads with GRDB's default keys (the key
    /// is the column's name, compared as GRDB compares them), if the row holds it.
    func columnIndex(forKey name: String) -> Int? {
        // The key usually is the declared name; otherwise compare as GRDB does, ignoring case.
        for index in columns.indices where name == table.sealedColumns[columns[index].index] { return index }
        var ascii: Bool?
        for index in columns.indices {
            let lowercased = table.lowercasedSealedColumns[columns[index].index]
            if name.utf8.count == lowercased.utf8.count {
                if let same = Self.sameASCIIColumn(name, lowercased) {
                    if same { return index }
                    continue
                }
            } else {
                // Lower-casing keeps an ASCII name's length: only a name with other characters can still match.
                if ascii == nil { ascii = name.utf8.allSatisfy { $0 < 0x80 } }
                if ascii == true { continue }
            }
            if name.lowercased() == lowercased { return index }
        }
        return nil
    }

    /// Whether `name` is `lowercased` in another case, compared byte by byte; nil when `name` is not
    /// ASCII up to where they first differ (compare with `lowercased()` then, as GRDB does).
    private static func sameASCIIColumn(_ name: String, _ lowercased: String) -> Bool? {
        for (byte, lower) in zip(name.utf8, lowercased.utf8) {
            guard byte < 0x80 else { return nil }
            let folded = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
            if folded != lower { return false }
        }
        return true
    }
}

/// One opened sealed column: its place in ``SealedTable/sealedColumns``, and its plain value.
struct OpenedColumn {
    let index: Int
    let value: DatabaseValue
}
