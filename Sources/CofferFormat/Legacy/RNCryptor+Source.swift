#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import CryptoExtras
// Only for `FileManager.default.temporaryDirectory`, the folder of the private snapshot.
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension RNCryptor {
    /// The plaintext of an authenticated RNCryptor v3 file, decrypted on demand.
    ///
    /// Made by ``RNCryptor/openSource(path:credentials:)`` only after the whole file's HMAC has been
    /// verified. Reads decrypt just the AES blocks that cover the requested range (CBC block *i* is
    /// `D(C[i]) XOR C[i-1]`, with the IV as `C[-1]`), so memory stays bounded whatever the file size,
    /// and several threads may read at once.
    ///
    /// Reads never go back to the original file. While the HMAC is computed, the IV and ciphertext
    /// are copied into a private snapshot: a file created exclusively, with mode 0600, in the
    /// temporary folder (`FileManager.default.temporaryDirectory`, which honours `TMPDIR`) and
    /// unlinked at once, so only this source's descriptor reaches it. The HMAC is computed over
    /// exactly the bytes written to the snapshot, so a file changed or replaced after it was opened
    /// can never have its new bytes decrypted.
    ///
    /// - Important: The snapshot costs as much temporary disk space as the ciphertext (the file's
    ///   size less its header and HMAC, plus 16 bytes), held until the last copy of the source is
    ///   released. Where the temporary folder is a RAM-backed file system (`tmpfs`), that space is
    ///   memory; point `TMPDIR` at a disk for very large files.
    public struct Source: PlaintextSource {
        /// The private snapshot: the IV, then the authenticated ciphertext.
        let snapshot: PositionalFile
        private let key: SymmetricKey
        /// The number of plaintext bytes (the ciphertext less its PKCS#7 padding).
        public let length: UInt64

        fileprivate init(snapshot: PositionalFile, key: SymmetricKey, length: UInt64) {
            self.snapshot = snapshot
            self.key = key
            self.length = length
        }

        /// The most ciphertext decrypted per step of a read, to bound memory on large reads.
        private static let stepBytes = 1 << 20

        /// Fills `buffer` with the plaintext at `offset`, decrypting only the blocks it covers.
        public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
            precondition(offset <= length && UInt64(buffer.count) <= length - offset, "read past the plaintext")
            let blockSize = Layout.blockSize
            var done = 0
            while done < buffer.count {
                let position = offset + UInt64(done)
                let firstBlock = position / UInt64(blockSize)
                let skip = Int(position % UInt64(blockSize))
                let count = min(buffer.count - done, Self.stepBytes - skip)
                let blocks = (skip + count + blockSize - 1) / blockSize
                // The block before the first one (the IV for block 0) chains into it; the snapshot
                // starts with the IV, so block i of the ciphertext lies at (i + 1) * 16.
                var chained = [UInt8](repeating: 0, count: (blocks + 1) * blockSize)
                try chained.withUnsafeMutableBytes {
                    try snapshot.readExactly(into: $0, at: firstBlock * UInt64(blockSize))
                }
                try RNCryptor.withDecrypted(chained, using: key) { plaintext in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[done..<done + count])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: plaintext[skip..<skip + count]))
                }
                done += count
            }
        }
    }

    /// Verifies an RNCryptor v3 file and returns its plaintext as a random-access source.
    ///
    /// The whole file's HMAC-SHA256 is checked first, streaming in bounded memory and compared in
    /// constant time; no plaintext is decrypted before it matches. The same pass copies the IV and
    /// ciphertext into the source's private snapshot (see ``Source``), which needs temporary disk
    /// space equal to the ciphertext's size; the HMAC covers exactly the bytes copied. Then the last
    /// block is decrypted, from the snapshot, to learn the plaintext length from its PKCS#7 padding.
    ///
    /// - Parameters:
    ///   - path: The file to open.
    ///   - credentials: The password of a password-based file, or the two keys of a key-based one.
    /// - Throws: ``ContainerError/malformedLegacy(_:)`` for a file too short, of another version or
    ///   options byte, with a ciphertext that is not whole AES blocks, or with bad padding behind a
    ///   good HMAC; ``ContainerError/wrongKeyKind(needs:)`` when keys are given for a password-based
    ///   file or a password for a key-based one; ``ContainerError/authenticationFailure`` when the
    ///   password or keys are wrong or any byte was changed; ``IOFailure`` when the file cannot be read
    ///   (or is not a regular file), or the snapshot cannot be created or written.
    public static func openSource(path: String, credentials: Credentials) throws -> Source {
        try openSource(file: PositionalFile(readingAt: path), credentials: credentials)
    }

    /// ``openSource(path:credentials:)`` over an already-open file.
    static func openSource(file: PositionalFile, credentials: Credentials) throws -> Source {
        let size = try file.size()
        let lead = try file.read(count: 2, at: 0)
        guard lead.count == 2 else {
            throw ContainerError.malformedLegacy("RNCryptor file too short: \(size) bytes")
        }
        guard lead[0] == Layout.version else {
            throw ContainerError.malformedLegacy("RNCryptor format version \(lead[0]) is not supported (only version 3)")
        }
        guard let passwordBased = Layout.isPasswordBased(options: lead[1]) else {
            throw ContainerError.malformedLegacy("unknown RNCryptor options byte \(lead[1]) (expected 0 or 1)")
        }
        let headerSize = Layout.headerSize(passwordBased: passwordBased)
        let minimum = Layout.minimumFileSize(passwordBased: passwordBased)
        guard size >= UInt64(minimum) else {
            throw ContainerError.malformedLegacy("RNCryptor file too short: \(size) bytes, the minimum is \(minimum)")
        }
        let ciphertextLength = size - UInt64(headerSize + Layout.hmacSize)
        guard ciphertextLength % UInt64(Layout.blockSize) == 0 else {
            throw ContainerError.malformedLegacy(
                "RNCryptor ciphertext of \(ciphertextLength) bytes is not a whole number of 16-byte AES blocks")
        }
        let header = try file.read(count: headerSize, at: 0)
        guard header.count == headerSize else { throw IOFailure(operation: .unexpectedEnd, path: file.path, errno: 0) }
        let keys = try keys(for: credentials, passwordBased: passwordBased, header: header)

        let snapshot = try makeSnapshot(of: file.path)
        try copyVerifyingHMAC(
            of: file, header: header, ciphertextLength: ciphertextLength, key: keys.hmac, into: snapshot)

        // Authenticated: now the padding may be looked at, in the snapshot only. The last block
        // chains from the one before it, which is the IV when the ciphertext is a single block.
        let tailOffset = ciphertextLength - UInt64(Layout.blockSize)
        var tail = [UInt8](repeating: 0, count: 2 * Layout.blockSize)
        try tail.withUnsafeMutableBytes { try snapshot.readExactly(into: $0, at: tailOffset) }
        let padding = try withDecrypted(tail, using: keys.encryption) { try paddingLength(ofLastBlock: $0) }
        return Source(snapshot: snapshot, key: keys.encryption, length: ciphertextLength - UInt64(padding))
    }

    /// The keys for a file of the given variant, refusing credentials of the other kind.
    private static func keys(for credentials: Credentials, passwordBased: Bool, header: [UInt8]) throws -> Keys {
        switch (credentials, passwordBased) {
        case (.password(let password), true):
            let salts = 2..<(2 + Layout.saltSize)
            return try Keys(
                password: password, encryptionSalt: header[salts],
                hmacSalt: header[salts.upperBound..<(salts.upperBound + Layout.saltSize)])
        case (.keys(let encryption, let hmac), false):
            return try Keys(encryption: encryption, hmac: hmac)
        case (.password, false):
            throw ContainerError.wrongKeyKind(needs: "an RNCryptor encryption key and HMAC key (it is key-based)")
        case (.keys, true):
            throw ContainerError.wrongKeyKind(needs: "an RNCryptor password (it is password-based)")
        }
    }

    /// Computes the HMAC over the header and ciphertext in bounded steps while writing the IV (the
    /// header's last block) and the ciphertext to `snapshot`, then compares it with the stored one in
    /// constant time.
    ///
    /// Each piece is read from `file` once into memory, added to the HMAC and written to the
    /// snapshot from that same buffer, so the snapshot holds exactly the authenticated bytes.
    private static func copyVerifyingHMAC(
        of file: PositionalFile, header: [UInt8], ciphertextLength: UInt64, key: SymmetricKey,
        into snapshot: PositionalFile
    ) throws {
        var mac = HMAC<SHA256>(key: key)
        mac.update(data: header)
        try header.suffix(Layout.blockSize).withUnsafeBytes { try snapshot.write($0, at: 0) }
        var chunk = [UInt8](repeating: 0, count: Int(min(UInt64(1 << 20), ciphertextLength)))
        var done: UInt64 = 0
        while done < ciphertextLength {
            let count = Int(min(UInt64(chunk.count), ciphertextLength - done))
            try chunk.withUnsafeMutableBytes {
                let piece = UnsafeMutableRawBufferPointer(rebasing: $0[0..<count])
                try file.readExactly(into: piece, at: UInt64(header.count) + done)
                mac.update(data: UnsafeRawBufferPointer(piece))
                try snapshot.write(UnsafeRawBufferPointer(piece), at: UInt64(Layout.blockSize) + done)
            }
            done += UInt64(count)
        }
        var stored = [UInt8](repeating: 0, count: Layout.hmacSize)
        try stored.withUnsafeMutableBytes { try file.readExactly(into: $0, at: UInt64(header.count) + ciphertextLength) }
        // `==` between a MAC and bytes is swift-crypto's constant-time comparison.
        guard mac.finalize() == stored else { throw ContainerError.authenticationFailure }
    }

    /// Creates the private snapshot for the file at `path`: a new file in the temporary folder,
    /// created exclusively (never through an existing name or link) with mode 0600 and unlinked at
    /// once, so that only the returned descriptor reaches it.
    static func makeSnapshot(of path: String) throws -> PositionalFile {
        let folder = FileManager.default.temporaryDirectory.path
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<16 {
            let name = ".coffer-rncryptor-" + String(generator.next() as UInt64, radix: 16)
            let snapshotPath = (folder.hasSuffix("/") ? folder : folder + "/") + name
            let descriptor = open(snapshotPath, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
            if descriptor < 0 {
                let code = errno
                if code == EEXIST || code == EINTR { continue }
                throw IOFailure(operation: .create, path: snapshotPath, errno: code)
            }
            let file = PositionalFile(adopting: descriptor, path: "\(snapshotPath) (a private copy of \(path))")
            guard unlink(snapshotPath) == 0 else {
                throw IOFailure(operation: .remove, path: snapshotPath, errno: errno)
            }
            return file
        }
        throw IOFailure(operation: .create, path: folder, errno: EEXIST)
    }

    /// The PKCS#7 padding length of an authenticated last plaintext block: 1...16, all bytes equal.
    static func paddingLength(ofLastBlock block: UnsafeRawBufferPointer) throws -> Int {
        guard let last = block.last, (1...Layout.blockSize).contains(Int(last)),
              block.suffix(Int(last)).allSatisfy({ $0 == last })
        else { throw ContainerError.malformedLegacy("RNCryptor plaintext has invalid PKCS#7 padding") }
        return Int(last)
    }

    /// Decrypts whole CBC blocks given after the ciphertext block that precedes them (or the IV),
    /// and lends the plaintext to `body`.
    static func withDecrypted<Result>(
        _ chained: [UInt8], using key: SymmetricKey, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result {
        let iv = try AES._CBC.IV(ivBytes: chained[0..<Layout.blockSize])
        let plaintext = try AES._CBC.decrypt(chained[Layout.blockSize...], using: key, iv: iv, noPadding: true)
        return try plaintext.withUnsafeBytes(body)
    }
}
