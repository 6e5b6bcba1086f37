#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// The self-describing ciphertext stored in a sealed column.
///
/// ```
/// offset  size  field
///      0     1  format version   0x01
///      1     1  algorithm        0x01 = AES-256-GCM, nonce = HMAC-SHA256(nonce key, AAD ‖ plaintext)[0..<12]
///      2     4  key version      big-endian
///      6    12  nonce
///     18     n  ciphertext       of the tagged plain value (PlainValue)
///   18+n    16  GCM tag
/// ```
/// The AEAD's associated data is ``AssociatedData`` followed by the 6 header bytes.
enum SealedValue {
    static let formatVersion: UInt8 = 1
    static let algorithmAESGCMDerivedNonce: UInt8 = 1
    static let headerCount = 6
    static let nonceCount = 12
    static let tagCount = 16
    static let minimumCount = headerCount + nonceCount + tagCount

    static func header(keyVersion: UInt32) -> [UInt8] {
        [formatVersion, algorithmAESGCMDerivedNonce] + (0..<4).map { UInt8(truncatingIfNeeded: keyVersion >> (24 - 8 * $0)) }
    }

    /// The key version a blob names, or nil when the blob is not a SealedFields ciphertext of a known format.
    static func keyVersion(of blob: Data) -> UInt32? {
        // Read in place: subscripting a `Data` byte by byte is slow, and this runs for every value read.
        blob.withUnsafeBytes { keyVersion(of: $0) }
    }

    /// The key version named by bytes read in place (see the `Data` form).
    static func keyVersion(of raw: UnsafeRawBufferPointer) -> UInt32? {
        guard raw.count >= minimumCount, raw[0] == formatVersion, raw[1] == algorithmAESGCMDerivedNonce else { return nil }
        return UInt32(raw[2]) << 24 | UInt32(raw[3]) << 16 | UInt32(raw[4]) << 8 | UInt32(raw[5])
    }

    /// Seals `plaintext`. The same plaintext, key, table, column and identity give the same bytes, so that
    /// saving an unchanged record changes nothing; anything else gives unrelated bytes.
    static func seal(_ plaintext: [UInt8], with key: DataKey, associatedData: AssociatedData) throws -> Data {
        let header = header(keyVersion: key.version)
        var aad = associatedData.bytes
        aad.append(contentsOf: header)
        var mac = key.nonceMAC
        mac.update(data: aad)
        mac.update(data: plaintext)
        let nonce = try mac.finalize().withUnsafeBytes { try AES.GCM.Nonce(data: UnsafeRawBufferPointer(rebasing: $0[..<nonceCount])) }
        let box = try AES.GCM.seal(plaintext, using: key.value, nonce: nonce, authenticating: aad)
        // nonce ‖ ciphertext ‖ tag is the box's combined form (there is one: the nonce is 12 bytes).
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        var blob = Data(capacity: headerCount + combined.count)
        blob.append(contentsOf: header)
        blob.append(combined)
        return blob
    }

    /// Opens a blob whose key version is `key.version`; throws `CryptoKitError` when it does not authenticate.
    static func open(_ blob: Data, with key: DataKey, associatedData: AssociatedData) throws -> Data {
        try blob.withUnsafeBytes { try open($0, with: key, prefix: associatedData.bytes, identityFields: UnsafeRawBufferPointer(start: nil, count: 0)) }
    }

    /// Opens a blob bound to `prefix ‖ identityFields` (then the blob's header). The blob's bytes are
    /// read in place, once (the read path passes SQLite's own, see ``BorrowedValue``), and the
    /// associated data is assembled in a temporary buffer (on the stack unless it is large): the read
    /// path does this for every value.
    static func open(
        _ raw: UnsafeRawBufferPointer, with key: DataKey, prefix: [UInt8], identityFields: UnsafeRawBufferPointer
    ) throws -> Data {
        guard raw.count >= minimumCount else { throw CryptoKitError.incorrectParameterSize }
        // nonce ‖ ciphertext ‖ tag is AES-GCM's combined layout.
        let box = try AES.GCM.SealedBox(combined: UnsafeRawBufferPointer(rebasing: raw[headerCount...]))
        let count = prefix.count + identityFields.count + headerCount
        return try withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { aad in
            let afterPrefix = prefix.withUnsafeBytes {
                aad.copyBytes(from: $0)
                return $0.count
            }
            UnsafeMutableRawBufferPointer(rebasing: aad[afterPrefix...]).copyMemory(from: identityFields)
            let afterIdentity = afterPrefix + identityFields.count
            UnsafeMutableRawBufferPointer(rebasing: aad[afterIdentity...]).copyBytes(from: raw[..<headerCount])
            return try AES.GCM.open(box, using: key.value, authenticating: UnsafeRawBufferPointer(aad))
        }
    }
}
