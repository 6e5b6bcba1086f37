/// The bytes a device's evidence is bound to (docs/ATTESTATION.md, "Client data").
///
/// An attestation binds a single-use server challenge and the device's X25519 public key, so a
/// model key is sealed only to a key an attested install holds; an assertion binds the model key
/// asked for and the same device key.
public enum AttestationClientData: Sendable {
    /// The prefix of an attestation's client data.
    public static let attestationLabel = Array("coffer-attest-v1\n".utf8)
    /// The prefix of an assertion's client data.
    public static let assertionLabel = Array("coffer-assert-v1\n".utf8)

    /// `"coffer-attest-v1\n" ‖ challenge ‖ devicePublicKey`.
    public static func attestation(challenge: [UInt8], devicePublicKey: [UInt8]) -> [UInt8] {
        attestationLabel + challenge + devicePublicKey
    }

    /// `"coffer-assert-v1\n" ‖ UTF-8(keyID) ‖ "\n" ‖ devicePublicKey`.
    public static func keyRequest(keyID: String, devicePublicKey: [UInt8]) -> [UInt8] {
        assertionLabel + Array(keyID.utf8) + [0x0A] + devicePublicKey
    }
}
