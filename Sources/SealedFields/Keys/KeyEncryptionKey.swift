#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import CryptoExtras
import Foundation

/// How the key-encryption key is obtained: from a passphrase with scrypt, or as a raw key that the app
/// keeps in its platform key store.
public enum KeySource: Sendable {
    /// A passphrase (its UTF-8 bytes after Unicode NFC normalization), stretched with scrypt using the
    /// salt and parameters stored in the database.
    /// New databases use `parameters`; existing ones use their stored parameters.
    case passphrase(String, parameters: ScryptParameters = .default)
    /// 32 random bytes kept outside the database (for example in the Keychain).
    case rawKey(SymmetricKey)
}

/// The key-encryption key (KEK) and the two keys derived from it: one wraps data keys, one makes the
/// verifier that tells a wrong passphrase before anything is read or written.
struct KeyEncryptionKey: Sendable {
    let wrap: SymmetricKey
    let verifierKey: SymmetricKey

    static let verifierLabel = Array("sealedfields.verifier.v1".utf8)

    init(source: KeySource, salt: [UInt8], scrypt: ScryptParameters?) throws {
        let material: SymmetricKey
        switch source {
        case .passphrase(let passphrase, _):
            guard !passphrase.isEmpty else { throw SealedFieldsError.emptyPassphrase }
            guard let scrypt else { throw SealedFieldsError.corruptKeyTables }
            try scrypt.checkLimits()
            material = try KDF.Scrypt.deriveKey(
                // NFC, so that "é" typed as one code point or as e + accent is the same passphrase.
                from: Array(passphrase.precomposedStringWithCanonicalMapping.utf8), salt: salt, outputByteCount: 32,
                rounds: 1 << Int(scrypt.logN), blockSize: Int(scrypt.r), parallelism: Int(scrypt.p))
        case .rawKey(let key):
            guard key.bitCount == 256 else { throw SealedFieldsError.invalidRawKey }
            material = key
        }
        func derive(_ label: String) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: material, salt: salt, info: Array("sealedfields.\(label).v1".utf8),
                outputByteCount: 32)
        }
        wrap = derive("wrap")
        verifierKey = derive("verifier")
    }

    /// HMAC-SHA256(verifier key, "sealedfields.verifier.v1"): stored, never the key itself.
    var verifier: Data { Data(HMAC<SHA256>.authenticationCode(for: Self.verifierLabel, using: verifierKey)) }

    /// Constant-time comparison with a stored verifier.
    func matches(verifier stored: Data) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(stored, authenticating: Self.verifierLabel, using: verifierKey)
    }

    /// AES-256-GCM of the data key, bound to its version: nonce (12) ‖ ciphertext (32) ‖ tag (16).
    func wrap(_ key: DataKey) throws -> Data {
        let material = key.material.withUnsafeBytes { Data($0) }
        return try AES.GCM.seal(material, using: wrap, authenticating: Self.label(key.version)).combined!
    }

    func unwrap(_ wrapped: Data, version: UInt32) throws -> DataKey {
        do {
            let material = try AES.GCM.open(AES.GCM.SealedBox(combined: wrapped), using: wrap, authenticating: Self.label(version))
            guard material.count == 32 else { throw SealedFieldsError.corruptKeyTables }
            return DataKey(version: version, material: SymmetricKey(data: material))
        } catch {
            throw SealedFieldsError.corruptKeyTables
        }
    }

    private static func label(_ version: UInt32) -> [UInt8] {
        Array("sealedfields.key.v1".utf8) + (0..<4).map { UInt8(truncatingIfNeeded: version >> (24 - 8 * $0)) }
    }
}
