#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// A keyed hash of a sealed value, stored in its own column so that equality search works without
/// decrypting every row.
///
/// ```
/// offset  size  field
///      0     1  0x02 (blind index, format 1)
///      1     4  key version, big-endian
///      5    16  HMAC-SHA256(index key of that version, AssociatedData(table, column, []) ‖ PlainValue)[0..<16]
/// ```
/// It reveals which rows hold equal values in that column (see docs/SEALEDFIELDS.md), nothing else.
enum BlindIndex {
    static let formatByte: UInt8 = 2
    static let count = 21

    static func compute(_ plaintext: [UInt8], with key: DataKey, table: String, column: String) -> Data {
        compute(plaintext, with: key, prefix: AssociatedData.prefix(table: table, column: column))
    }

    /// `prefix` is `AssociatedData.prefix(table:column:)`, computed once per table.
    static func compute(_ plaintext: [UInt8], with key: DataKey, prefix: [UInt8]) -> Data {
        var mac = key.indexMAC
        mac.update(data: prefix)
        mac.update(data: plaintext)
        var blob = Data(capacity: count)
        blob.append(formatByte)
        blob.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: key.version >> (24 - 8 * $0)) })
        blob.append(contentsOf: mac.finalize().prefix(16))
        return blob
    }
}
