import CofferFormat
import Foundation

extension UUID {
    /// The UUID written as `8-4-4-4-12` hex digits (either case), read over the text's bytes:
    /// Foundation's `UUID(uuidString:)` calls `sscanf` (a tenth of a manifest request's time on
    /// the device listener) and also takes a space before a digit, which this refuses.
    init?(hexText text: some StringProtocol) {
        // A native string's bytes are read in place (no iterator; report batches name twenty).
        if let uuid = text.utf8.withContiguousStorageIfAvailable({ UUID(hexBytes: $0) }) {
            guard let uuid else { return nil }
            self = uuid
            return
        }
        // Others (a Substring of a bridged string, say) are copied first.
        guard let uuid = Array(text.utf8).withUnsafeBufferPointer({ UUID(hexBytes: $0) }) else { return nil }
        self = uuid
    }

    /// `text`'s 36 bytes in the 8-4-4-4-12 form, either case; nil for anything else.
    init?(hexBytes text: UnsafeBufferPointer<UInt8>) {
        guard text.count == 36, text[8] == UInt8(ascii: "-"), text[13] == UInt8(ascii: "-"), text[18] == UInt8(ascii: "-"),
              text[23] == UInt8(ascii: "-")
        else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed: Bool = withUnsafeMutableBytes(of: &bytes) { out in
            var position = 0
            for index in 0..<16 {
                if position == 8 || position == 13 || position == 18 || position == 23 { position += 1 }
                guard let high = Hex.value(of: text[position]), let low = Hex.value(of: text[position + 1]) else { return false }
                out[index] = high << 4 | low
                position += 2
            }
            return true
        }
        guard parsed else { return nil }
        self.init(uuid: bytes)
    }

    /// The UUID as 36 lowercase hex digits and dashes, written over bytes: `uuidString` formats
    /// with `snprintf` on Linux, once per report batch for the rate limiters' keys.
    var lowercaseHexText: String { hexText(digits: "0123456789abcdef") }

    /// The UUID as `uuidString` writes it (uppercase), without `snprintf`: how Fluent stores a UUID
    /// in SQLite (as text), for rows written in bulk.
    var uppercaseHexText: String { hexText(digits: "0123456789ABCDEF") }

    private func hexText(digits: StaticString) -> String {
        return withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
                digits.withUTF8Buffer { digits in
                    var position = 0
                    for (index, byte) in bytes.enumerated() {
                        if index == 4 || index == 6 || index == 8 || index == 10 {
                            out[position] = UInt8(ascii: "-")
                            position += 1
                        }
                        out[position] = digits[Int(byte >> 4)]
                        out[position + 1] = digits[Int(byte & 0x0F)]
                        position += 2
                    }
                    return position
                }
            }
        }
    }
}
