import Crypto
import CryptoExtras

/// The two keys of one container, derived with HKDF-SHA-256 from the input key material and the
/// header's salt: one authenticates the header, the other seals the chunks.
struct FileKeys: Sendable {
    static let headerInfo = Array("coffer v1 header".utf8)
    static let payloadInfo = Array("coffer v1 payload".utf8)

    let headerKey: SymmetricKey
    let payloadKey: SymmetricKey

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
        headerKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKeyMaterial, salt: header.salt, info: Self.headerInfo, outputByteCount: 32)
        payloadKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKeyMaterial, salt: header.salt, info: Self.payloadInfo, outputByteCount: 32)
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
