import GRDB

/// What every sealed value is bound to: its table, its column and its record's identity.
///
/// Layout (docs/SEALEDFIELDS.md): the ASCII label `sealedfields.value.v1`, then table name, column name
/// and each identity value (as ``PlainValue``), each preceded by its length as 4 bytes big-endian.
/// The ciphertext header is appended by ``SealedValue``.
struct AssociatedData: Sendable {
    let bytes: [UInt8]

    init(table: String, column: String, identity: [DatabaseValue]) {
        var bytes = Array("sealedfields.value.v1".utf8)
        func field(_ field: [UInt8]) {
            let count = UInt32(field.count)
            bytes.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: count >> (24 - 8 * $0)) })
            bytes.append(contentsOf: field)
        }
        field(Array(table.lowercased().utf8))
        field(Array(column.lowercased().utf8))
        for value in identity { field(PlainValue.encode(value)) }
        self.bytes = bytes
    }
}
