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
        var scratch: [UInt8] = []
        for (index, column) in table.lowercasedSealedColumns.enumerated() {
            // Lower-cased, a statement row finds the column in its first lookup. (GRDB's untyped
            // subscript: its typed one is generic, and costs a metadata lookup per value.)
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
                sealed: blob, prefix: table.prefixes[index], identityFields: identity, scratch: &scratch,
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

    /// The opened column a coding key reads with GRDB's default keys (the key is the column's name,
    /// compared as GRDB compares them), if the row holds it.
    func column(forKey name: String) -> OpenedColumn? {
        for column in columns {
            if name == column.name || Self.sameColumn(name, table.lowercasedSealedColumns[column.index]) { return column }
        }
        return nil
    }

    /// Whether `name` is `lowercased` in another case. ASCII is compared byte by byte (most keys differ
    /// in length and are settled at once); anything else as GRDB does, with `lowercased()`.
    private static func sameColumn(_ name: String, _ lowercased: String) -> Bool {
        let utf8 = name.utf8
        guard utf8.count == lowercased.utf8.count else {
            // Lower-casing keeps an ASCII name's length: only another name can still match.
            return !utf8.allSatisfy { $0 < 0x80 } && name.lowercased() == lowercased
        }
        for (byte, lower) in zip(utf8, lowercased.utf8) {
            guard byte < 0x80 else { return name.lowercased() == lowercased }
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
