import GRDB

/// What every sealed value is bound to: its table, its column and its record's identity.
///
/// Layout (docs/SEALEDFIELDS.md): the ASCII label `sealedfields.value.v1`, then the lower-cased table
/// name, the lower-cased column name and each identity value (as ``PlainValue``), each preceded by its
/// length as 4 bytes big-endian. The ciphertext header is appended by ``SealedValue``.
struct AssociatedData: Sendable {
    let bytes: [UInt8]

    /// The label, table and column fields: the same for every row, so tables compute it once.
    static func prefix(table: String, column: String) -> [UInt8] {
        var bytes = Array("sealedfields.value.v1".utf8)
        appendField(Array(table.lowercased().utf8), to: &bytes)
        appendField(Array(column.lowercased().utf8), to: &bytes)
        return bytes
    }

    /// The identity fields of one record.
    static func identityFields(_ identity: [DatabaseValue]) -> [UInt8] {
        var bytes: [UInt8] = []
        for value in identity { appendField(PlainValue.encode(value), to: &bytes) }
        return bytes
    }

    init(prefix: [UInt8], identityFields: [UInt8]) {
        var bytes = prefix
        bytes.reserveCapacity(prefix.count + identityFields.count + SealedValue.headerCount)
        bytes.append(contentsOf: identityFields)
        self.bytes = bytes
    }

    init(table: String, column: String, identity: [DatabaseValue]) {
        self.init(prefix: Self.prefix(table: table, column: column), identityFields: Self.identityFields(identity))
    }

    private static func appendField(_ field: [UInt8], to bytes: inout [UInt8]) {
        let count = UInt32(field.count)
        bytes.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: count >> (24 - 8 * $0)) })
        bytes.append(contentsOf: field)
    }
}
