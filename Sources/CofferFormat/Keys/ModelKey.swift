#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// A 256-bit model key with its random ID and a human name.
///
/// The ID is written into every container sealed with the key, as a hint for finding the key; the
/// key itself is never written anywhere but a `.modelkey` file (mode 0600) or the server's
/// encrypted store.
public struct ModelKey: Sendable {
    /// Bytes of key material.
    public static let byteCount = 32

    /// The random key ID: 32 lowercase hex characters.
    public let id: String
    /// The name a person gave the key.
    public let name: String
    /// When the key was generated.
    public let created: Date
    /// The key material.
    public let key: SymmetricKey

    /// Wraps existing key material; `id` must be a valid key ID and `key` 256 bits.
    public init(id: String, name: String, created: Date, key: SymmetricKey) throws {
        guard !id.isEmpty, id.utf8.count <= ContainerHeader.maximumKeyIDLength,
              id.utf8.allSatisfy(ContainerHeader.isKeyIDByte)
        else { throw ModelKeyError.invalidID }
        guard key.bitCount == Self.byteCount * 8 else { throw ModelKeyError.wrongKeySize }
        self.id = id
        self.name = name
        self.created = created
        self.key = key
    }

    /// Generates a fresh key and ID from the system's secure random generator.
    public static func generate(name: String, now: Date = Date()) -> ModelKey {
        let id = SymmetricKey(size: .bits128).withUnsafeBytes { $0.hexString }
        // A freshly made ID and 256-bit key always pass the checks in init.
        return try! ModelKey(id: id, name: name, created: now, key: SymmetricKey(size: .bits256))
    }
}

/// Why a model key or `.modelkey` file was refused. Never carries key material.
public enum ModelKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key ID is empty, too long or has characters outside `A-Z a-z 0-9 . _ -`.
    case invalidID
    /// The key material is not 256 bits.
    case wrongKeySize
    /// The file is not a `.modelkey` file of a known format.
    case malformedFile(String)

    /// One line saying what is wrong.
    public var description: String {
        switch self {
        case .invalidID: return "invalid model key ID"
        case .wrongKeySize: return "model key material must be 256 bits"
        case .malformedFile(let why): return "not a usable .modelkey file: \(why)"
        }
    }
}

extension String {
    /// The string with leading zeros up to `width` characters (hex bytes, octal modes).
    package func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
