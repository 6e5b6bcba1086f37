/// The parts of an App Attest attestation object (the CBOR map DCAppAttestService's `attestKey`
/// returns): its format, certificate chain, receipt and authenticator data.
///
/// Parsing checks structure only; ``AppleAppAttestVerifier`` checks what the parts say. Keys the
/// object may gain later are ignored.
public struct AppleAttestationObject: Sendable, Equatable {
    /// The attestation statement format; App Attest's is `apple-appattest`.
    public let fmt: String
    /// The DER certificates of `attStmt.x5c`: the credential certificate first, then intermediates.
    public let x5c: [[UInt8]]
    /// `attStmt.receipt`: Apple's signed receipt, kept for the fraud-metric service; not verified here.
    public let receipt: [UInt8]
    /// The authenticator data bytes, which ``AppleAuthenticatorData`` reads.
    public let authData: [UInt8]

    /// Parses an attestation object; throws `AttestationFailure(.invalid, …)` for anything malformed.
    public init(bytes: [UInt8]) throws {
        let root = try CBORReader.read(bytes)
        guard case .map = root else { throw AttestationFailure.invalid("attestation object is not a CBOR map") }
        guard let fmt = root[textKey: "fmt"]?.textString else {
            throw AttestationFailure.invalid("attestation object has no text fmt")
        }
        guard let statement = root[textKey: "attStmt"], case .map = statement else {
            throw AttestationFailure.invalid("attestation object has no attStmt map")
        }
        guard let authData = root[textKey: "authData"]?.byteString else {
            throw AttestationFailure.invalid("attestation object has no authData bytes")
        }
        guard case .array(let chain) = statement[textKey: "x5c"] else {
            throw AttestationFailure.invalid("attestation statement has no x5c array")
        }
        var certificates: [[UInt8]] = []
        for element in chain {
            guard let der = element.byteString else {
                throw AttestationFailure.invalid("attestation statement x5c holds a non-bytes entry")
            }
            certificates.append(der)
        }
        guard let receipt = statement[textKey: "receipt"]?.byteString else {
            throw AttestationFailure.invalid("attestation statement has no receipt bytes")
        }
        self.fmt = fmt
        self.x5c = certificates
        self.receipt = receipt
        self.authData = authData
    }
}
