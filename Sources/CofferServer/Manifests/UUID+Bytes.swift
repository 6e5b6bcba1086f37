import CofferFormat
import Foundation

extension UUID {
    /// The UUID written as `8-4-4-4-12` hex digits (either case), read over the text's bytes:
    /// Foundation's `UUID(uuidString:)` calls `sscanf` (a tenth of a manifest request's time on
    /// the device listener) and also takes a space before a digit, which this refuses.
    init?(hexText text: some StringProtocol) {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let utf8 = text.utf8
        guard utf8.count == 36 else { return nil }
        var high: UInt8? = nil, index = 0
        let parsed: Bool = withUnsafeMutableBytes(of: &bytes) { out in
            for (position, byte) in utf8.enumerated() {
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard byte == UInt8(ascii: "-") else { return false }
                    continue
                }
                guard let nibble = Hex.value(of: byte) else { return false }
                if let first = high {
                    out[index] = first << 4 | nibble
                    index += 1
                    high = nil
                } else {
                    high = nibble
                }
            }
            return true
        }
        guard parsed else { return nil }
        self.init(uuid: bytes)
    }
}
