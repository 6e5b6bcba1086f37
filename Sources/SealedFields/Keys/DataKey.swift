#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// One version of the random 256-bit data key, and the keys derived from it by HKDF-SHA256.
///
/// The data key itself never touches a value: `value` encrypts (AES-256-GCM), `nonce` derives each
/// value's nonce, and `index` computes blind indexes, so that no key serves two purposes.
///
/// A class, so that handing a key to each value costs one retain rather than one per derived key.
final class DataKey: Sendable {
    let version: UInt32
    let material: SymmetricKey
    let value: SymmetricKey
    let nonce: SymmetricKey
    let index: SymmetricKey
    /// HMAC states already keyed with `nonce` and `index`: copying one is cheaper than keying anew.
    let nonceMAC: HMAC<SHA256>
    let indexMAC: HMAC<SHA256>

    init(version: UInt32, material: SymmetricKey) {
        self.version = version
        self.material = material
        func derive(_ label: String) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: material, salt: [UInt8](), info: Array("sealedfields.\(label).v1".utf8),
                outputByteCount: 32)
        }
        value = derive("value")
        nonce = derive("nonce")
        index = derive("index")
        nonceMAC = HMAC<SHA256>(key: nonce)
        indexMAC = HMAC<SHA256>(key: index)
    }

    static func random(version: UInt32) -> DataKey {
        DataKey(version: version, material: SymmetricKey(size: .bits256))
    }
}
