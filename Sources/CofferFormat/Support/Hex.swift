/// Hexadecimal text, the one encoder and decoder of the package: digests, key and chunk IDs, blob
/// addresses, temporary-file suffixes. `package` access: every module of Coffer uses it, and no app
/// that imports ``CofferFormat`` sees it.
package enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`, two digits a byte.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The lowercase digit of each half of `byte`, high first: for comparisons that must not write
    /// a secret's digest out as a string.
    package static func digitPair(_ byte: UInt8) -> (high: UInt8, low: UInt8) {
        (digits[Int(byte >> 4)], digits[Int(byte & 0x0F)])
    }

    /// The value of one hex digit, either case; nil for any other byte. Inlinable: the server reads
    /// twenty UUIDs a report batch with it.
    @inlinable
    /// Whether `text` is a SHA-256 as the package writes one: 64 lowercase hex digits.
    package static func isSHA256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    package static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The bytes of hex text, either case; nil when the length is odd or a character is not a digit.
    /// Nothing is allocated before the length is checked.
    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var iterator = text.makeIterator()
        while let first = iterator.next(), let second = iterator.next() {
            guard let high = value(of: first), let low = value(of: second) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}

package extension Sequence where Element == UInt8 {
    /// Lowercase hex, two digits a byte (``Hex/encode(_:)``).
    var hexString: String { Hex.encode(self) }
}
