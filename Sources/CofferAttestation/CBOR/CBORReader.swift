/// A bounded CBOR decoder (RFC 8949) for attestation evidence: it reads what App Attest uses and
/// refuses the rest before allocating for it.
///
/// Accepted: unsigned and negative integers, byte and text strings, arrays and maps, with definite
/// lengths. Refused, as `AttestationFailure(.invalid, …)`: indefinite lengths, tags, floats and simple
/// values, reserved additional information, nesting deeper than ``maximumDepth``, a length or count
/// larger than the input left (checked before anything is allocated), text that is not UTF-8, map keys
/// that are arrays or maps, duplicate map keys, and bytes after the item.
///
/// Integers and lengths in longer-than-needed encodings and map keys in any order are accepted: the
/// evidence is not signed as CBOR (the signed parts are the authenticator data bytes and the
/// certificates), so another encoding of the same values changes nothing that is verified, and a
/// stricter reader would risk refusing genuine devices if Apple's encoder changed. Duplicate keys are
/// refused because two readers could pick different values.
public enum CBORReader {
    /// The deepest nesting accepted: the top-level item is at depth 1.
    public static let maximumDepth = 16

    /// Decodes `bytes` as exactly one CBOR data item.
    public static func read(_ bytes: [UInt8]) throws -> CBORValue {
        var cursor = CBORCursor(bytes: bytes[...])
        let value = try cursor.readValue(depth: 1)
        guard cursor.remaining == 0 else { throw AttestationFailure.invalid("CBOR item is followed by extra bytes") }
        return value
    }

    /// Decodes the one CBOR data item at the start of `bytes`, returning it and how many bytes it took.
    static func readPrefix(_ bytes: ArraySlice<UInt8>) throws -> (value: CBORValue, length: Int) {
        var cursor = CBORCursor(bytes: bytes)
        let value = try cursor.readValue(depth: 1)
        return (value, cursor.position - bytes.startIndex)
    }
}

/// A read position in CBOR input; every read checks the bytes left first.
struct CBORCursor {
    let bytes: ArraySlice<UInt8>
    private(set) var position: Int

    init(bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.position = bytes.startIndex
    }

    /// How many bytes are left.
    var remaining: Int { bytes.endIndex - position }

    mutating func readValue(depth: Int) throws -> CBORValue {
        guard depth <= CBORReader.maximumDepth else {
            throw AttestationFailure.invalid("CBOR nesting is deeper than \(CBORReader.maximumDepth)")
        }
        let initial = try readByte()
        let major = initial >> 5
        let argument = try readArgument(initial & 0x1F)
        switch major {
        case 0:
            return .unsigned(argument)
        case 1:
            return .negative(argument)
        case 2:
            return .bytes(Array(try take(argument)))
        case 3:
            let raw = try take(argument)
            let text = String(decoding: raw, as: UTF8.self)
            guard text.utf8.elementsEqual(raw) else { throw AttestationFailure.invalid("CBOR text string is not UTF-8") }
            return .text(text)
        case 4:
            // Each element takes at least one byte: a count above what is left cannot be honest.
            guard argument <= UInt64(remaining) else { throw AttestationFailure.invalid("CBOR array count exceeds the input") }
            var elements: [CBORValue] = []
            elements.reserveCapacity(Int(argument))
            for _ in 0..<argument { elements.append(try readValue(depth: depth + 1)) }
            return .array(elements)
        case 5:
            guard argument <= UInt64(remaining) / 2 else { throw AttestationFailure.invalid("CBOR map count exceeds the input") }
            var entries: [CBORMapEntry] = []
            entries.reserveCapacity(Int(argument))
            var keys = Set<CBORValue>()
            for _ in 0..<argument {
                let key = try readValue(depth: depth + 1)
                switch key {
                case .array, .map: throw AttestationFailure.invalid("CBOR map key is an array or a map")
                default: break
                }
                guard keys.insert(key).inserted else { throw AttestationFailure.invalid("CBOR map has a duplicate key") }
                entries.append(CBORMapEntry(key: key, value: try readValue(depth: depth + 1)))
            }
            return .map(entries)
        case 6:
            throw AttestationFailure.invalid("CBOR tags are not accepted")
        default:
            throw AttestationFailure.invalid("CBOR floats and simple values are not accepted")
        }
    }

    private mutating func readByte() throws -> UInt8 {
        guard remaining >= 1 else { throw AttestationFailure.invalid("CBOR input ends early") }
        defer { position += 1 }
        return bytes[position]
    }

    /// The head's argument: a small value, or the 1, 2, 4 or 8 big-endian bytes that follow.
    private mutating func readArgument(_ info: UInt8) throws -> UInt64 {
        let size: Int
        switch info {
        case 0..<24: return UInt64(info)
        case 24: size = 1
        case 25: size = 2
        case 26: size = 4
        case 27: size = 8
        case 31: throw AttestationFailure.invalid("CBOR indefinite lengths are not accepted")
        default: throw AttestationFailure.invalid("CBOR head uses reserved additional information")
        }
        return try take(UInt64(size)).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The next `count` bytes, refusing a count beyond the input before slicing or allocating.
    private mutating func take(_ count: UInt64) throws -> ArraySlice<UInt8> {
        guard count <= UInt64(remaining) else { throw AttestationFailure.invalid("CBOR length exceeds the input") }
        let start = position
        position += Int(count)
        return bytes[start..<position]
    }
}
