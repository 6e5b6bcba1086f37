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
        for value in identity { appendIdentityField(value, to: &bytes) }
        return bytes
    }

    /// Appends one identity field (its length, then the value as ``PlainValue``) without making the
    /// encoded value first: the read path does this for every row.
    static func appendIdentityField(_ value: DatabaseValue, to bytes: inout [UInt8]) {
        switch value.storage {
        case .blob(let data):
            appendLength(1 + data.count, to: &bytes)
            bytes.append(4)
            data.withUnsafeBytes { bytes.append(contentsOf: $0) }
        case .string(let string):
            var string = string
            string.withUTF8 { utf8 in
                appendLength(1 + utf8.count, to: &bytes)
                bytes.append(3)
                bytes.append(contentsOf: utf8)
            }
        default:
            appendField(PlainValue.encode(value), to: &bytes)
        }
    }

    private static func appendLength(_ count: Int, to bytes: inout [UInt8]) {
        let count = UInt32(count)
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: count >> UInt32(shift))) }
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
        appendLength(field.count, to: &bytes)
        bytes.append(contentsOf: field)
    }
}
