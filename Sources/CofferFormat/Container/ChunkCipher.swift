#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// Seals and opens single chunks with AES-256-GCM under the payload key. Version 1: nonce =
/// 88-bit big-endian chunk counter + last-chunk flag byte, associated data = the header MAC.
/// Version 2: nonce = the first 12 bytes of the chunk's ID, associated data = the ID.
struct ChunkCipher: Sendable {
    let key: SymmetricKey
    let associatedData: [UInt8]
    /// Version 2: the IDs that give each chunk its nonce.
    let table: ChunkTable?

    init(keys: FileKeys, header: ContainerHeader) {
        key = keys.payloadKey
        associatedData = header.mac
        table = header.chunkTable
    }

    /// Version 2: seals one chunk whose ID is `id`; the result is ciphertext followed by the tag.
    static func seal(_ plaintext: UnsafeRawBufferPointer, id: ChunkID, using key: SymmetricKey) throws -> Data {
        let id = id.bytes
        let box = try AES.GCM.seal(plaintext, using: key, nonce: try AES.GCM.Nonce(data: id[0..<12]), authenticating: id)
        return box.combined!.dropFirst(12)
    }

    static func nonce(index: UInt64, isLast: Bool) -> AES.GCM.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        withUnsafeBytes(of: index.bigEndian) { bytes.replaceSubrange(3..<11, with: $0) }
        bytes[11] = isLast ? 1 : 0
        // Twelve bytes is always a valid GCM nonce.
        return try! AES.GCM.Nonce(data: bytes)
    }

    /// Seals one chunk; the result is ciphertext followed by the 16-byte tag.
    func seal(_ plaintext: UnsafeRawBufferPointer, index: UInt64, isLast: Bool) throws -> Data {
        let box = try AES.GCM.seal(
            plaintext, using: key, nonce: Self.nonce(index: index, isLast: isLast), authenticating: associatedData)
        // `combined` is nonce | ciphertext | tag in one buffer: drop the nonce, which is implicit.
        return box.combined!.dropFirst(12)
    }

    /// Opens one chunk given as ciphertext followed by its tag; any failure is `authenticationFailure`.
    func open(_ sealed: UnsafeRawBufferPointer, index: UInt64, isLast: Bool) throws -> Data {
        guard sealed.count >= ContainerHeader.tagLength else { throw ContainerError.authenticationFailure }
        let split = sealed.count - ContainerHeader.tagLength
        do {
            if let table {
                let id = table.entries[Int(index)].id.bytes
                let box = try AES.GCM.SealedBox(
                    nonce: try AES.GCM.Nonce(data: id[0..<12]),
                    ciphertext: UnsafeRawBufferPointer(rebasing: sealed[..<split]),
                    tag: UnsafeRawBufferPointer(rebasing: sealed[split...]))
                return try AES.GCM.open(box, using: key, authenticating: id)
            }
            let box = try AES.GCM.SealedBox(
                nonce: Self.nonce(index: index, isLast: isLast),
                ciphertext: UnsafeRawBufferPointer(rebasing: sealed[..<split]),
                tag: UnsafeRawBufferPointer(rebasing: sealed[split...]))
            return try AES.GCM.open(box, using: key, authenticating: associatedData)
        } catch {
            throw ContainerError.authenticationFailure
        }
    }
}
