#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import CryptoExtras

extension RNCryptor {
    /// Writes `source` as a password-based RNCryptor v3 file, streaming in bounded memory.
    ///
    /// Fresh random salts and IV are drawn for each call. The output is produced strictly in order:
    /// `write` is called with consecutive pieces of the file (header, ciphertext in pieces of at most
    /// 1 MiB, then the 32-byte HMAC) and must append each one to the output, for example with
    /// `FileHandle.write` or a positional write at a running offset. The buffer passed to `write` is
    /// valid only during the call. If any call throws, the output is incomplete and must be discarded.
    ///
    /// - Parameters:
    ///   - source: The plaintext, read in order.
    ///   - password: The password bytes; RNCryptor v3 readers hash the UTF-8 encoding of the password.
    ///   - write: Appends one piece of the file to the output.
    /// - Throws: ``ContainerError/malformedLegacy(_:)`` for an empty password (the format forbids it),
    ///   and whatever `source` or `write` throw.
    public static func encrypt(
        _ source: some PlaintextSource, password: [UInt8],
        writingTo write: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        guard !password.isEmpty else {
            throw ContainerError.malformedLegacy("an RNCryptor password must not be empty")
        }
        let encryptionSalt = SealedModel.randomBytes(Layout.saltSize)
        let hmacSalt = SealedModel.randomBytes(Layout.saltSize)
        let keys = try Keys(password: password, encryptionSalt: encryptionSalt[...], hmacSalt: hmacSalt[...])
        let header = [Layout.version, Layout.passwordOption] + encryptionSalt + hmacSalt + SealedModel.randomBytes(Layout.blockSize)
        try encrypt(source, keys: keys, header: header, writingTo: write)
    }

    /// Writes `header` (whose last 16 bytes are the IV), the AES-256-CBC ciphertext of `source` with
    /// PKCS#7 padding, and the HMAC-SHA256 of both. The caller makes the header match the keys.
    static func encrypt(
        _ source: some PlaintextSource, keys: Keys, header: [UInt8],
        writingTo write: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let step = 1 << 20  // a multiple of the block size, so only the last piece is padded
        var mac = HMAC<SHA256>(key: keys.hmac)
        mac.update(data: header)
        try header.withUnsafeBytes(write)

        var previousBlock = Array(header.suffix(Layout.blockSize))
        var plaintext = [UInt8](repeating: 0, count: Int(min(UInt64(step), source.length)))
        var position: UInt64 = 0
        while true {
            let remaining = source.length - position
            let isLast = remaining <= UInt64(step)
            let count = isLast ? Int(remaining) : step
            if count > 0 {
                try plaintext.withUnsafeMutableBytes {
                    try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<count]), at: position)
                }
            }
            let ciphertext = try AES._CBC.encrypt(
                plaintext[0..<count], using: keys.encryption, iv: AES._CBC.IV(ivBytes: previousBlock),
                noPadding: !isLast)
            mac.update(data: ciphertext)
            try ciphertext.withUnsafeBytes(write)
            previousBlock = Array(ciphertext.suffix(Layout.blockSize))
            position += UInt64(count)
            if isLast { break }
        }
        let tag = mac.finalize()
        try tag.withUnsafeBytes(write)
    }
}
