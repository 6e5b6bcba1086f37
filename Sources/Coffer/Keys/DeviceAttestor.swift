import Foundation

/// Proves to the server that key requests come from a genuine install of the app, for apps whose
/// attestation policy is not `none` (docs/ATTESTATION.md).
///
/// The SDK composes the client data, asks the server for challenges, keeps the attested key's
/// identifier and counter in the key store and sends the evidence; an attestor only does what
/// needs the platform: on Apple platforms ``AppAttestAttestor`` (DCAppAttestService); on Android an
/// app implements it over the Android Keystore as docs/ATTESTATION.md describes.
public protocol DeviceAttestor: Sendable {
    /// The evidence format, which must be the app's policy: `apple-app-attest` or `android-key-attestation`.
    var format: String { get }

    /// Makes a new attested key whose attestation covers `clientDataHash` (SHA-256 of the client
    /// data the SDK composed).
    func attestNewKey(clientDataHash: Data) async throws -> AttestationStatement

    /// An assertion by the attested key `keyID` over `clientData`: for `apple-app-attest` the
    /// assertion object DCAppAttestService makes for SHA-256(`clientData`); for
    /// `android-key-attestation` the key's ECDSA (SHA-256, DER) signature over `clientData`
    /// followed by `counter` as four big-endian bytes.
    func assert(keyID: Data, clientData: Data, counter: UInt32) async throws -> Data
}

/// A newly attested key: its identifier and the evidence for it.
public struct AttestationStatement: Sendable {
    /// The key's identifier (App Attest's key ID; for Android, SHA-256 of the attested key's X9.63 public key).
    public var keyID: Data
    /// `apple-app-attest`: the attestation object.
    public var attestationObject: Data?
    /// `android-key-attestation`: the attestation certificate chain, DER, leaf first.
    public var certificateChain: [Data]?

    /// A statement with App Attest's attestation object.
    public init(keyID: Data, attestationObject: Data) {
        self.keyID = keyID
        self.attestationObject = attestationObject
    }

    /// A statement with an Android key attestation chain.
    public init(keyID: Data, certificateChain: [Data]) {
        self.keyID = keyID
        self.certificateChain = certificateChain
    }
}
