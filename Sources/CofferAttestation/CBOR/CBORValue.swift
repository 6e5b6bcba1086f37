/// One decoded CBOR data item (RFC 8949), limited to the kinds App Attest evidence uses.
///
/// Floats, simple values, tags and indefinite lengths are not represented: ``CBORReader`` refuses them.
public enum CBORValue: Sendable, Hashable {
    /// Major type 0: an unsigned integer.
    case unsigned(UInt64)
    /// Major type 1: the negative integer `-1 - n`, holding `n` so every encodable value fits.
    case negative(UInt64)
    /// Major type 2: a byte string.
    case bytes([UInt8])
    /// Major type 3: a UTF-8 text string.
    case text(String)
    /// Major type 4: an array.
    case array([CBORValue])
    /// Major type 5: a map, its entries in the order they were encoded (keys are unique).
    case map([CBORMapEntry])
}

/// One key and value of a CBOR map.
public struct CBORMapEntry: Sendable, Hashable {
    /// The entry's key.
    public let key: CBORValue
    /// The entry's value.
    public let value: CBORValue

    /// An entry mapping `key` to `value`.
    public init(key: CBORValue, value: CBORValue) {
        self.key = key
        self.value = value
    }
}

extension CBORValue {
    /// The value under the text key `key` when this is a map, else nil.
    subscript(textKey key: String) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first(where: { $0.key == .text(key) })?.value
    }

    /// The bytes when this is a byte string, else nil.
    var byteString: [UInt8]? {
        guard case .bytes(let bytes) = self else { return nil }
        return bytes
    }

    /// The string when this is a text string, else nil.
    var textString: String? {
        guard case .text(let text) = self else { return nil }
        return text
    }
}
