/// A key that attestation evidence showed to be held by a genuine install of an app: what the
/// server keeps to check that install's later assertions.
public struct AttestedKey: Sendable, Equatable {
    /// The key's identifier: SHA-256 of ``publicKey`` (Apple's key identifier; the same rule for Android).
    public let keyID: [UInt8]
    /// The attested P-256 public key, ANSI X9.63 uncompressed (65 bytes).
    public let publicKey: [UInt8]
    /// The counter of the newest accepted evidence (0 after an attestation).
    public let counter: UInt32
    /// The serial numbers of the chain's certificates, lowercase hex without leading zeros, leaf
    /// first, so a revocation list updated later can still refuse the install (Android).
    public let certificateSerials: [String]

    /// An attested key.
    public init(keyID: [UInt8], publicKey: [UInt8], counter: UInt32, certificateSerials: [String] = []) {
        self.keyID = keyID
        self.publicKey = publicKey
        self.counter = counter
        self.certificateSerials = certificateSerials
    }
}
