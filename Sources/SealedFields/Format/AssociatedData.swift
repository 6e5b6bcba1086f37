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
    /// encoded value first.
    static func appendIdentityField(_ value: DatabaseValue, to bytes: inout [UInt8]) {
        switch value.storage {
        case .blob(let data):
            data.withUnsafeBytes { appendIdentityField(tag: PlainValue.blobTag, $0, to: &bytes) }
        case .string(let string):
            var string = string
            string.withUTF8 { appendIdentityField(tag: PlainValue.textTag, UnsafeRawBufferPointer($0), to: &bytes) }
        default:
            appendField(PlainValue.encode(value), to: &bytes)
        }
    }

    /// Appends the identity field of a value read in place (see ``BorrowedValue``); `.missing` and
    /// `.null` are the caller's to refuse.
    static func appendIdentityField(_ value: BorrowedValue, to bytes: inout [UInt8]) {
        switch value {
        case .missing, .null: appendField(PlainValue.encode(.null), to: &bytes)
        case .integer(let value): appendField(PlainValue.encode(value.databaseValue), to: &bytes)
        case .real(let value): appendField(PlainValue.encode(value.databaseValue), to: &bytes)
        case .text(let utf8): appendIdentityField(tag: PlainValue.textTag, utf8, to: &bytes)
        case .blob(let blob): appendIdentityField(tag: PlainValue.blobTag, blob, to: &bytes)
        case .owned(let value): appendIdentityField(value, to: &bytes)
        }
    }

    /// Appends the identity field of a TEXT or BLOB value from its bytes (`tag` says which).
    static func appendIdentityField(tag: UInt8, _ value: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        appendLength(1 + value.count, to: &bytes)
        bytes.append(tag)
        bytes.append(contentsOf: value)
    }

    /// Writes the identity field of a value read in place into `buffer` at `offset`, and moves
    /// `offset` past it; false, with nothing written, when the field does not fit (or is not one a
    /// statement row gives: the caller then assembles the fields in an array).
    static func writeIdentityField(_ value: BorrowedValue, into buffer: UnsafeMutableRawBufferPointer, at offset: inout Int) -> Bool {
        switch value {
        case .integer(let value):
            return withUnsafeBytes(of: UInt64(bitPattern: value).bigEndian) {
                writeField(tag: PlainValue.integerTag, $0, into: buffer, at: &offset)
            }
        case .real(let value):
            return withUnsafeBytes(of: value.bitPattern.bigEndian) {
                writeField(tag: PlainValue.realTag, $0, into: buffer, at: &offset)
            }
        case .text(let utf8):
            return writeField(tag: PlainValue.textTag, utf8, into: buffer, at: &offset)
        case .blob(let blob):
            return writeField(tag: PlainValue.blobTag, blob, into: buffer, at: &offset)
        case .missing, .null, .owned:
            return false
        }
    }

    /// Writes `length ‖ tag ‖ body` (the length counts the tag) if it fits.
    private static func writeField(
        tag: UInt8, _ body: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer, at offset: inout Int
    ) -> Bool {
        // Counted so that no sum can overflow: body.count is at most what SQLite holds.
        guard body.count < buffer.count, 5 + body.count <= buffer.count - offset else { return false }
        let length = UInt32(1 + body.count).bigEndian
        withUnsafeBytes(of: length) { UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + 4]).copyMemory(from: $0) }
        buffer[offset + 4] = tag
        UnsafeMutableRawBufferPointer(rebasing: buffer[(offset + 5)...]).copyMemory(from: body)
        offset += 5 + body.count
        return true
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
