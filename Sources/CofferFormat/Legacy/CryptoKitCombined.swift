#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
// Foundation's `Data` is what swift-crypto's AES-GCM takes and returns; reading the file straight
// into one avoids copying a message that may be gigabytes long.
import Foundation

/// Reads files of the `mlmodelencoder` tool: one AES-256-GCM message in CryptoKit's "combined"
/// layout, `nonce (12) | ciphertext | tag (16)`, with no associated data.
///
/// The key is the first 32 bytes of the UTF-8 passphrase, used as is (no key derivation).
///
/// Short passphrases: no published source of `mlmodelencoder` could be found (the code, issue and
/// page corpora searched turned up nothing by that name). With CryptoKit, "the first 32 bytes" of a
/// shorter passphrase is a shorter `SymmetricKey`, and `AES.GCM.seal` accepts exactly 16 and 24-byte
/// keys too (AES-128/192-GCM) and throws for every other length. So the files such a tool can have
/// written use a passphrase of 16, 24, or at least 32 bytes; those are read (with the key size
/// CryptoKit would have used) and every other length is refused, never padded.
///
/// GCM authenticates a message only as a whole, so the file is read into memory entirely; its size is
/// checked against a limit before anything is allocated.
public enum CryptoKitCombined {
    /// The default largest file ``open(path:passphrase:maxSize:)`` reads: 2 GiB, or `Int.max` where
    /// `Int` cannot hold 2 GiB (watchOS's 32-bit `Int`, on which `2 << 30` wrapped to a negative limit
    /// that refused every file).
    public static let defaultMaxSize = Int(clamping: Int64(2) << 30)
    /// Bytes of nonce before the ciphertext.
    static let nonceSize = 12
    /// Bytes of tag after the ciphertext.
    static let tagSize = 16
    /// Bytes of the AES-256 key taken from the passphrase.
    static let keySize = 32

    /// Decrypts and authenticates an `mlmodelencoder` file.
    ///
    /// - Parameters:
    ///   - path: The file to open.
    ///   - passphrase: The passphrase as UTF-8 bytes; its first 32 bytes are the key. It must be 16,
    ///     24, or at least 32 bytes long.
    ///   - maxSize: The largest file accepted, in bytes; larger files are refused before reading.
    /// - Returns: The plaintext, held in memory, as a ``PlaintextSource``.
    /// - Throws: ``ContainerError/malformedLegacy(_:)`` for a passphrase of another length, a file
    ///   shorter than 28 bytes or larger than `maxSize`; ``ContainerError/authenticationFailure`` for
    ///   a wrong passphrase or a changed byte; ``IOFailure`` when the file cannot be read.
    public static func open(path: String, passphrase: [UInt8], maxSize: Int = defaultMaxSize) throws -> Plaintext {
        let key = try key(from: passphrase)
        let file = try PositionalFile(readingAt: path)
        let size = try file.size()
        guard size <= UInt64(max(maxSize, 0)) else {
            throw ContainerError.malformedLegacy(
                "AES-GCM file of \(size) bytes exceeds the \(maxSize)-byte limit for single-message files")
        }
        guard size >= UInt64(nonceSize + tagSize) else {
            throw ContainerError.malformedLegacy(
                "AES-GCM file too short: \(size) bytes, the minimum is \(nonceSize + tagSize)")
        }
        var combined = Data(count: Int(size))
        try combined.withUnsafeMutableBytes { try file.readExactly(into: $0, at: 0) }
        let box = try AES.GCM.SealedBox(combined: combined)
        do {
            return Plaintext(try AES.GCM.open(box, using: key))
        } catch {
            // The layout and key size are already known good, so a failed open is a failed tag check;
            // on Linux swift-crypto reports it as `underlyingCoreCryptoError`, not `authenticationFailure`.
            throw ContainerError.authenticationFailure
        }
    }

    /// Seals `plaintext` the way `mlmodelencoder` does: a random nonce, AES-256-GCM with the first 32
    /// bytes of `passphrase` as key, in the combined layout. Meant for tests and for making samples.
    ///
    /// - Throws: ``ContainerError/malformedLegacy(_:)`` for a passphrase of another length.
    public static func seal(_ plaintext: [UInt8], passphrase: [UInt8]) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key(from: passphrase))
        // The combined form exists whenever the nonce is the standard 12 bytes, as here.
        guard let combined = box.combined else {
            throw ContainerError.malformedLegacy("AES-GCM sealed box has no combined form")
        }
        return Array(combined)
    }

    /// The first 32 bytes of the passphrase as an AES-256 key, or a 16/24-byte passphrase as an
    /// AES-128/192 key, as CryptoKit would have used them.
    private static func key(from passphrase: [UInt8]) throws -> SymmetricKey {
        guard passphrase.count >= keySize || passphrase.count == 16 || passphrase.count == 24 else {
            // The passphrase's length is not told: it is close enough to the secret to keep quiet.
            throw ContainerError.malformedLegacy(
                "this passphrase cannot have made an mlmodelencoder file: CryptoKit needs 16, 24 or at least 32 bytes")
        }
        return SymmetricKey(data: passphrase.prefix(keySize))
    }

    /// The authenticated plaintext of an `mlmodelencoder` file, held in memory.
    public struct Plaintext: PlaintextSource {
        private let data: Data

        fileprivate init(_ data: Data) {
            self.data = data
        }

        /// The number of plaintext bytes.
        public var length: UInt64 { UInt64(data.count) }

        /// A copy of the whole plaintext.
        public var bytes: [UInt8] { Array(data) }

        /// Copies the plaintext at `offset` into `buffer`.
        public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
            precondition(offset <= length && UInt64(buffer.count) <= length - offset, "read past the plaintext")
            data.withUnsafeBytes { all in
                let start = Int(offset)
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[start..<start + buffer.count]))
            }
        }
    }
}
