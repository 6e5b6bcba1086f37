/// The parts of an App Attest assertion (the CBOR map DCAppAttestService's `generateAssertion`
/// returns): a signature and the authenticator data it covers.
public struct AppleAssertion: Sendable, Equatable {
    /// The DER-encoded ECDSA signature.
    public let signature: [UInt8]
    /// The authenticator data bytes, which ``AppleAuthenticatorData`` reads.
    public let authenticatorData: [UInt8]

    /// Parses an assertion; throws `AttestationFailure(.invalid, …)` for anything malformed.
    public init(bytes: [UInt8]) throws {
        let root = try CBORReader.read(bytes)
        guard case .map = root else { throw AttestationFailure.invalid("assertion is not a CBOR map") }
        guard let signature = root[textKey: "signature"]?.byteString else {
            throw AttestationFailure.invalid("assertion has no signature bytes")
        }
        guard let authenticatorData = root[textKey: "authenticatorData"]?.byteString else {
            throw AttestationFailure.invalid("assertion has no authenticatorData bytes")
        }
        self.signature = signature
        self.authenticatorData = authenticatorData
    }
}
