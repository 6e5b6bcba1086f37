#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import CryptoExtras

/// Reads and writes files in the RNCryptor data format, version 3.
///
/// Two variants exist, told apart by the options byte:
///
/// - password-based (options `0x01`):
///   `version 0x03 | options 0x01 | encryption salt (8) | HMAC salt (8) | IV (16) | ciphertext | HMAC (32)`;
///   both keys come from PBKDF2-HMAC-SHA1 over the password with 10 000 rounds, 32 bytes each.
/// - key-based (options `0x00`):
///   `version 0x03 | options 0x00 | IV (16) | ciphertext | HMAC (32)`; the caller supplies both keys.
///
/// The ciphertext is AES-256-CBC with PKCS#7 padding; the HMAC is HMAC-SHA256 over every byte
/// before it (header and ciphertext).
public enum RNCryptor {
    /// What opens an RNCryptor file.
    public enum Credentials: Sendable {
        /// The password of a password-based file (options `0x01`), as the bytes the writer hashed
        /// (RNCryptor v3 uses the UTF-8 encoding of the password string).
        case password([UInt8])
        /// The 32-byte AES key and the 32-byte HMAC key of a key-based file (options `0x00`).
        case keys(encryption: [UInt8], hmac: [UInt8])
    }

    /// How many leading bytes ``looksLikeRNCryptor(_:)`` needs to recognise a file: the size of the
    /// smallest password-based file. Pass this many bytes, or the whole file if it is shorter.
    public static let detectionPrefixLength = Layout.minimumFileSize(passwordBased: true)

    /// Tells whether `prefix`, the first bytes of a file, plausibly starts an RNCryptor v3 file.
    ///
    /// True when the version byte is 3, the options byte is 0 (key-based) or 1 (password-based) and
    /// `prefix` is at least as long as the smallest file of that variant (66 or 82 bytes). Pass
    /// ``detectionPrefixLength`` bytes, or the whole file when it is shorter. Nothing is
    /// authenticated: a true answer only means the file is worth trying.
    public static func looksLikeRNCryptor(_ prefix: [UInt8]) -> Bool {
        guard prefix.count >= 2, prefix[0] == Layout.version,
              let passwordBased = Layout.isPasswordBased(options: prefix[1])
        else { return false }
        return prefix.count >= Layout.minimumFileSize(passwordBased: passwordBased)
    }
}

extension RNCryptor {
    /// Byte sizes and offsets of the RNCryptor v3 layout.
    enum Layout {
        static let version: UInt8 = 3
        static let passwordOption: UInt8 = 0x01
        static let keyOption: UInt8 = 0x00
        static let saltSize = 8
        static let blockSize = 16
        static let hmacSize = 32
        static let keySize = 32
        static let pbkdf2Rounds = 10_000

        /// `true` for the password option, `false` for the key option, nil for anything else.
        static func isPasswordBased(options: UInt8) -> Bool? {
            switch options {
            case passwordOption: return true
            case keyOption: return false
            default: return nil
            }
        }

        /// Version, options, the two salts when password-based, and the IV.
        static func headerSize(passwordBased: Bool) -> Int {
            2 + (passwordBased ? 2 * saltSize : 0) + blockSize
        }

        /// Header, one ciphertext block (PKCS#7 always adds at least one byte) and the HMAC.
        static func minimumFileSize(passwordBased: Bool) -> Int {
            headerSize(passwordBased: passwordBased) + blockSize + hmacSize
        }
    }

    /// The AES key and the HMAC key of one file.
    struct Keys: Sendable {
        let encryption: SymmetricKey
        let hmac: SymmetricKey

        /// Wraps two caller-supplied 32-byte keys.
        init(encryption: [UInt8], hmac: [UInt8]) throws {
            guard encryption.count == Layout.keySize, hmac.count == Layout.keySize else {
                throw ContainerError.malformedLegacy("RNCryptor keys must be \(Layout.keySize) bytes each")
            }
            self.encryption = SymmetricKey(data: encryption)
            self.hmac = SymmetricKey(data: hmac)
        }

        /// Derives both keys from a password and the two salts of a password-based file.
        init(password: [UInt8], encryptionSalt: ArraySlice<UInt8>, hmacSalt: ArraySlice<UInt8>) throws {
            encryption = try Self.derive(password: password, salt: encryptionSalt)
            hmac = try Self.derive(password: password, salt: hmacSalt)
        }

        /// PBKDF2-HMAC-SHA1, 10 000 rounds, 32 bytes, as RNCryptor v3 fixes them.
        ///
        /// The round count is far below what swift-crypto's checked API accepts (210 000), so the
        /// unchecked variant is used: the format fixes the count and reading old files needs it.
        static func derive(password: [UInt8], salt: ArraySlice<UInt8>) throws -> SymmetricKey {
            try KDF.Insecure.PBKDF2.deriveKey(
                from: password, salt: Array(salt), using: .insecureSHA1,
                outputByteCount: Layout.keySize, unsafeUncheckedRounds: Layout.pbkdf2Rounds)
        }
    }
}
