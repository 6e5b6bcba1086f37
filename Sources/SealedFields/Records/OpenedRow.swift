import Foundation
import GRDB

/// A fetched row with the opened values of its sealed columns, each checked against the associated
/// data of its place (table, column, the row's identity), and which coding key reads which of them.
///
/// Every sealed column the row holds is opened, whether or not the record decodes it: a row with one
/// forged or misplaced value is refused whole. A class: the decoder and each of its containers share it.
final class OpenedRow {
    let table: SealedTable
    let row: Row
    let store: SealedFieldsStore
    /// The record type being decoded, whose decoding strategies apply (nil when only the values are wanted).
    let recordType: (any (FetchableRecord & Decodable).Type)?
    /// The sealed columns the row holds, in ``SealedTable/sealedColumns`` order, opened.
    let columns: [OpenedColumn]

    /// Nil when the row holds none of the table's sealed columns.
    init?(
        _ row: Row, of table: SealedTable, with store: SealedFieldsStore,
        as recordType: (any (FetchableRecord & Decodable).Type)?
    ) throws {
        var columns: [OpenedColumn] = []
        var identity: [UInt8] = []
        var key: DataKey?
        for (index, column) in table.lowercasedSealedColumns.enumerated() {
            // Lower-cased, a statement row finds the column in its first lookup. (GRDB's untyped
            // subscript: its typed ones are generic, and cost a metadata lookup per value.)
            guard let stored = row[column] else {
                // NULL where a ciphertext belongs is refused like any other plain value.
                if row.hasColumn(column) { throw SealedFieldsError.notSealed(table: table.name, column: table.sealedColumns[index]) }
                continue
            }
            guard let blob = stored as? Data else {
                throw SealedFieldsError.notSealed(table: table.name, column: table.sealedColumns[index])
            }
            if columns.isEmpty {
                columns.reserveCapacity(table.sealedColumns.count)
                identity = try table.identityFields(of: row)
            }
            let value = try store.open(
                sealed: blob, prefix: table.prefixes[index], identityFields: identity, key: &key,
                table: table.name, column: table.sealedColumns[index])
            columns.append(OpenedColumn(index: index, name: table.sealedColumns[index], value: value))
        }
        guard !columns.isEmpty else { return nil }
        self.table = table
        self.row = row
        self.store = store
        self.recordType = recordType
        self.columns = columns
    }

    /// Where in ``columns`` is the opened column a coding key reads with GRDB's default keys (the key
    /// is the column's name, compared as GRDB compares them), if the row holds it.
    func columnIndex(forKey name: String) -> Int? {
        // The key usually is the declared name; otherwise compare as GRDB does, ignoring case.
        for index in columns.indices where name == columns[index].name { return index }
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

/// One opened sealed column: its place in ``SealedTable/sealedColumns``, its declared name, its plain value.
struct OpenedColumn {
    let index: Int
    let name: String
    let value: DatabaseValue
}
