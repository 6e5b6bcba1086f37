import CofferFormat
import X509

/// Certificate serial numbers as Google's attestation status list writes them: lowercase hex
/// without leading zeros (Java's `BigInteger.toString(16)`).
enum AndroidSerialNumber {
    /// The serial of `certificate` in status-list form.
    static func hex(of certificate: Certificate) -> String {
        hex(Array(certificate.serialNumber.bytes))
    }

    /// Big-endian serial bytes in status-list form ("0" for zero).
    static func hex(_ bytes: [UInt8]) -> String {
        trimmed(bytes.hexString)
    }

    /// `text` lowercased without leading zeros, or nil if it is empty or not hexadecimal.
    static func normalised(_ text: String) -> String? {
        let lower = text.lowercased()
        guard !lower.isEmpty, lower.utf8.allSatisfy({ Hex.value(of: $0) != nil }) else { return nil }
        return trimmed(lower)
    }

    private static func trimmed(_ hex: String) -> String {
        let significant = hex.drop(while: { $0 == "0" })
        return significant.isEmpty ? "0" : String(significant)
    }
}
