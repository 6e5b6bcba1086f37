import Foundation

/// Which fields of a protobuf message a ``Skeleton`` keeps.
///
/// Large Core ML and ONNX files are mostly weights. Rather than decode them whole, a skeleton walks the
/// wire format field by field, copies the small fields that carry structure and names, and drops the bulk
/// (counting its bytes), giving a much smaller message of the same type that the generated code decodes.
indirect enum FieldRule: Sendable {
    /// Copy the field (unless it is over the part limit, when it is dropped and counted).
    case keep
    /// Copy the field; over the part limit, keep its number with an empty value (as ``stub``), so a oneof's
    /// case survives even when its content is too large to keep.
    case keepOrStub
    /// Leave the field out and count its bytes.
    case drop
    /// Keep the field's number with an empty value (a oneof's case survives, its content does not).
    case stub
    /// Walk into the length-delimited field with these rules.
    case message(MessageRule)
}

/// Rules for a message's fields: by number, with one rule for every other field.
struct MessageRule: Sendable {
    var fields: [Int: FieldRule]
    var otherwise: FieldRule
}

/// A message rebuilt from the kept fields of a larger one, and the bytes it left out.
struct Skeleton {
    /// The kept fields, in wire format.
    var bytes = Data()
    /// Bytes of field values left out.
    var droppedBytes: UInt64 = 0

    let limits: InspectionLimits
    let format: String

    /// Walks `length` bytes of `source` at `offset` as a message under `rule`.
    static func build(_ source: any ByteSource, offset: UInt64 = 0, length: UInt64, rule: MessageRule,
                      limits: InspectionLimits, format: String) throws -> Skeleton {
        var skeleton = Skeleton(limits: limits, format: format)
        var cursor = ByteCursor(source, format: format, offset: offset)
        skeleton.bytes = try skeleton.walk(&cursor, end: offset + length, rule: rule, depth: 0)
        return skeleton
    }

    private mutating func walk(_ cursor: inout ByteCursor, end: UInt64, rule: MessageRule, depth: Int) throws -> Data {
        guard depth < 16 else { throw InspectionError.malformed(format: format, reason: "messages nest too deeply") }
        var out = Data()
        while cursor.offset < end {
            let tag = try varint(&cursor, end: end)
            let number = Int(tag >> 3), wireType = Int(tag & 7)
            guard number >= 1, number < 1 << 29 else {
                throw InspectionError.malformed(format: format, reason: "field number \(number) at byte \(cursor.offset)")
            }
            let fieldRule = rule.fields[number] ?? rule.otherwise
            switch wireType {
            case 0:
                let value = try varint(&cursor, end: end)
                if case .drop = fieldRule { continue }
                out.append(Self.encodeVarint(tag))
                out.append(Self.encodeVarint(value))
            case 1, 5:
                let size = wireType == 1 ? 8 : 4
                guard cursor.offset + UInt64(size) <= end else { throw truncated(cursor) }
                let value = try cursor.bytes(size, "a fixed-size field")
                if case .drop = fieldRule { droppedBytes += UInt64(size); continue }
                out.append(Self.encodeVarint(tag))
                out.append(value)
            case 2:
                let length = try varint(&cursor, end: end)
                guard length <= end - cursor.offset else { throw truncated(cursor) }
                let start = cursor.offset
                switch fieldRule {
                case .drop:
                    droppedBytes += length
                    try cursor.skip(length, "a field")
                case .stub:
                    droppedBytes += length
                    try cursor.skip(length, "a field")
                    out.append(Self.encodeVarint(tag))
                    out.append(0)
                case .keep, .keepOrStub:
                    guard length <= limits.maximumPartBytes else {
                        droppedBytes += length
                        try cursor.skip(length, "a field")
                        if case .keepOrStub = fieldRule {
                            out.append(Self.encodeVarint(tag))
                            out.append(0)
                        }
                        continue
                    }
                    out.append(Self.encodeVarint(tag))
                    out.append(Self.encodeVarint(length))
                    out.append(try cursor.bytes(Int(length), "a field"))
                case .message(let inner):
                    let body = try walk(&cursor, end: start + length, rule: inner, depth: depth + 1)
                    out.append(Self.encodeVarint(tag))
                    out.append(Self.encodeVarint(UInt64(body.count)))
                    out.append(body)
                }
                guard cursor.offset == start + length else { throw truncated(cursor) }
            default:
                throw InspectionError.malformed(format: format, reason: "wire type \(wireType) at byte \(cursor.offset)")
            }
            guard UInt64(out.count) <= limits.maximumMessageBytes else {
                throw InspectionError.tooLarge(format: format, what: "the model's structure without its weights",
                                               size: UInt64(out.count), limit: limits.maximumMessageBytes)
            }
        }
        guard cursor.offset == end else { throw truncated(cursor) }
        return out
    }

    private func truncated(_ cursor: ByteCursor) -> InspectionError {
        InspectionError.malformed(format: format, reason: "a field runs past the end of its message at byte \(cursor.offset)")
    }

    private func varint(_ cursor: inout ByteCursor, end: UInt64) throws -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 70, by: 7) {
            guard cursor.offset < end else { throw truncated(cursor) }
            let byte = try cursor.byte("a varint")
            guard shift < 64 else { break }
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        throw InspectionError.malformed(format: format, reason: "a varint longer than ten bytes at byte \(cursor.offset)")
    }

    static func encodeVarint(_ value: UInt64) -> Data {
        var value = value
        var out = Data()
        while value >= 0x80 {
            out.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
        return out
    }
}
