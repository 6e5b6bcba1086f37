import Crypto

extension AndroidKeyAttestationVerifier {
    /// Verifies a later request of an attested install: `signature` (DER ECDSA P-256 with
    /// SHA-256) by `key.publicKey` over `clientData ‖ counter` (4 bytes, big-endian).
    ///
    /// - Returns: `counter`, to be stored as the key's new counter.
    /// - Throws: ``AttestationFailure`` — `invalid` for a bad signature or key, `revoked` if a
    ///   serial of `key.certificateSerials` is now on the revocation list, `replayed` unless
    ///   `counter` is greater than `key.counter`.
    public func verifyAssertion(signature: [UInt8], clientData: [UInt8], counter: UInt32, key: AttestedKey) throws -> UInt32 {
        guard let publicKey = try? P256.Signing.PublicKey(x963Representation: key.publicKey) else {
            throw AttestationFailure.invalid("the attested key is not a P-256 key")
        }
        guard let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: signature) else {
            throw AttestationFailure.invalid("Android assertion signature is not a DER ECDSA signature")
        }
        let counterBytes: [UInt8] = [UInt8(truncatingIfNeeded: counter >> 24), UInt8(truncatingIfNeeded: counter >> 16),
                                     UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter)]
        guard publicKey.isValidSignature(ecdsa, for: clientData + counterBytes) else {
            throw AttestationFailure.invalid("Android assertion signature does not verify")
        }
        try revocations.check(serials: key.certificateSerials)
        guard counter > key.counter else {
            throw AttestationFailure(.replayed, "Android assertion counter \(counter) is not above \(key.counter)")
        }
        return counter
    }
}
