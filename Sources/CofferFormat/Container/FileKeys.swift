#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import CryptoExtras

/// The keys of one container, derived with HKDF-SHA-256 from the input key material: one
/// authenticates the header (with the header's salt), one seals the chunks; version 2 adds the
/// key of the chunk IDs. In version 1 the chunk key depends on the salt, so every container has
/// its own; in version 2 the chunk keys do not, so equal chunks seal alike under one model key.
struct FileKeys: Sendable {
    static let headerInfo = Array("coffer v1 header".utf8)
    static let payloadInfo = Array("coffer v1 payload".utf8)
    static let headerInfoV2 = Array("coffer v2 header".utf8)
    static let chunkIDInfo = Array("coffer v2 chunk id".utf8)
    static let chunkSealInfo = Array("coffer v2 chunk seal".utf8)

    let headerKey: SymmetricKey
    /// Seals the chunks: version 1's payload key, or version 2's seal key.
    let payloadKey: SymmetricKey
    /// Version 2: the key of the chunk IDs (HMAC-SHA-256 of each chunk's plaintext).
    let chunkIDKey: SymmetricKey?
    /// Version 2 writers: the keyed gear table that cuts the plaintext (``ContentChunker``).
    let chunkGear: [UInt64]

    /// Derives the keys for `header` from `key`, refusing a key of the wrong kind.
    init(for header: ContainerHeader, using key: KeyMaterial) throws {
        let inputKeyMaterial: SymmetricKey
        switch (header.keyDerivation, key) {
        case (.modelKey, .modelKey(let modelKey)):
            inputKeyMaterial = modelKey.key
        case (.passphrase(let parameters), .passphrase(let passphrase)):
            try parameters.checkLimits()
            inputKeyMaterial = try KDF.Scrypt.deriveKey(
                from: passphrase, salt: parameters.salt, outputByteCount: 32,
                rounds: 1 << Int(parameters.logN), blockSize: Int(parameters.r), parallelism: Int(parameters.p),
                maxMemory: Int(parameters.memoryBytes) + (1 << 20)
            )
        case (.modelKey, .passphrase):
            throw ContainerError.wrongKeyKind(needs: "a model key (.modelkey), not a passphrase")
        case (.passphrase, .modelKey):
            throw ContainerError.wrongKeyKind(needs: "a passphrase, not a model key")
        }
        if header.version == 1 {
            headerKey = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: inputKeyMaterial, salt: header.salt, info: Self.headerInfo, outputByteCount: 32)
            payloadKey = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: inputKeyMaterial, salt: header.salt, info: Self.payloadInfo, outputByteCount: 32)
            chunkIDKey = nil
            chunkGear = []
        } else {
            headerKey = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: inputKeyMaterial, salt: header.salt, info: Self.headerInfoV2, outputByteCount: 32)
            payloadKey = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: inputKeyMaterial, salt: [UInt8](), info: Self.chunkSealInfo, outputByteCount: 32)
            chunkIDKey = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: inputKeyMaterial, salt: [UInt8](), info: Self.chunkIDInfo, outputByteCount: 32)
            chunkGear = ContentChunker.gear(inputKeyMaterial: inputKeyMaterial)
        }
    }

    /// Version 2: the ID of a chunk with this plaintext.
    func chunkID(of plaintext: UnsafeRawBufferPointer) -> ChunkID {
        // Only version 2 keys reach here (the sealer asks for IDs only when writing version 2).
        ChunkID(Array(HMAC<SHA256>.authenticationCode(for: plaintext, using: chunkIDKey!)))
    }

    /// HMAC-SHA-256 of the header body.
    func mac(of header: ContainerHeader) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: header.encodedBody(), using: headerKey))
    }

    /// Checks the header's MAC in constant time.
    func verify(_ header: ContainerHeader) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(header.mac, authenticating: header.encodedBody(), using: headerKey)
    }
}
