#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// How a server hands a model key to one device: the key sealed with HPKE (RFC 9180, base mode,
/// X25519 / HKDF-SHA-256 / ChaCha20-Poly1305) to the device's X25519 public key, so it never
/// travels or rests in the clear. The key ID and device ID are authenticated with it, so a delivery
/// cannot be replayed to another device or presented as another key.
///
/// The server seals, the device (SDK or `coffer device fetch-key`) opens; both use this type so the
/// wire format has one definition.
public enum KeyDelivery {
    /// The suite's name, as the server reports it.
    public static let suiteName = "HPKE-X25519-SHA256-ChaCha20Poly1305"
    /// HPKE's `info`: names the protocol and its version.
    public static let info = Data("coffer key delivery v1".utf8)

    /// A sealed key: HPKE's encapsulated key and the ciphertext of the 32 key bytes.
    public struct Sealed: Sendable, Equatable {
        /// The ephemeral public key the device needs to open the ciphertext.
        public let encapsulatedKey: Data
        /// The sealed key material and its tag.
        public let ciphertext: Data

        /// Wraps the two parts received from a server.
        public init(encapsulatedKey: Data, ciphertext: Data) {
            self.encapsulatedKey = encapsulatedKey
            self.ciphertext = ciphertext
        }
    }

    /// What the ciphertext authenticates besides the key: `keyID|deviceID`.
    public static func associatedData(keyID: String, deviceID: String) -> Data {
        Data("\(keyID)|\(deviceID)".utf8)
    }

    /// Seals `key` to `devicePublicKey` for the device `deviceID`.
    public static func seal(
        _ key: SymmetricKey, keyID: String, deviceID: String, to devicePublicKey: Curve25519.KeyAgreement.PublicKey
    ) throws -> Sealed {
        var sender = try HPKE.Sender(recipientKey: devicePublicKey, ciphersuite: .Curve25519_SHA256_ChachaPoly, info: info)
        let ciphertext = try key.withUnsafeBytes {
            try sender.seal(Data($0), authenticating: associatedData(keyID: keyID, deviceID: deviceID))
        }
        return Sealed(encapsulatedKey: sender.encapsulatedKey, ciphertext: ciphertext)
    }

    /// Opens a delivery with the device's private key; any failure is `authenticationFailure`.
    public static func open(
        _ sealed: Sealed, keyID: String, deviceID: String, using privateKey: Curve25519.KeyAgreement.PrivateKey
    ) throws -> SymmetricKey {
        do {
            var recipient = try HPKE.Recipient(
                privateKey: privateKey, ciphersuite: .Curve25519_SHA256_ChachaPoly, info: info,
                encapsulatedKey: sealed.encapsulatedKey)
            let material = try recipient.open(sealed.ciphertext, authenticating: associatedData(keyID: keyID, deviceID: deviceID))
            guard material.count == ModelKey.byteCount else { throw ContainerError.authenticationFailure }
            return SymmetricKey(data: material)
        } catch {
            throw ContainerError.authenticationFailure
        }
    }
}
