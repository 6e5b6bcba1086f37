import Crypto
import Foundation
@_spi(FixedExpiryValidationTime) import X509

/// Checks App Attest evidence as Apple's "Validating apps that connect to your server" describes:
/// an attestation once per key, then an assertion with each request.
public struct AppleAppAttestVerifier: Sendable {
    /// The roots a credential certificate's chain must lead to.
    let trustedRoots: [Certificate]

    /// A verifier trusting `trustedRoots`: Apple's App Attestation Root CA unless a test supplies its own.
    public init(trustedRoots: [Certificate] = [AppleAppAttestVerifier.appleRoot]) {
        self.trustedRoots = trustedRoots
    }

    /// Verifies an attestation object (CBOR, fmt `apple-appattest`) for `keyID` over `clientData`.
    ///
    /// - Parameters:
    ///   - object: The attestation object `DCAppAttestService.attestKey` returned.
    ///   - keyID: The raw 32-byte key identifier `generateKey` returned: SHA-256 of the key's X9.63 form.
    ///   - clientData: The bytes whose SHA-256 the app passed as `clientDataHash`.
    ///   - policy: The App ID and environment the evidence must come from.
    ///   - time: When the certificates must be valid.
    /// - Returns: The attested key, with counter 0.
    /// - Throws: `AttestationFailure(.invalid, …)` naming the first failed check.
    public func verifyAttestation(
        _ object: [UInt8], keyID: [UInt8], clientData: [UInt8], policy: AppleAppAttestPolicy, at time: Date
    ) async throws -> AttestedKey {
        try await verifyAttestation(
            object, keyID: keyID, clientDataHash: Array(SHA256.hash(data: clientData)), policy: policy, at: time)
    }

    /// ``verifyAttestation(_:keyID:clientData:policy:at:)`` given the `clientDataHash` bytes the app
    /// passed to `attestKey`, for evidence whose app did not pass SHA-256 of client data the server
    /// holds (Apple's published sample passes a challenge string as is).
    public func verifyAttestation(
        _ object: [UInt8], keyID: [UInt8], clientDataHash: [UInt8], policy: AppleAppAttestPolicy, at time: Date
    ) async throws -> AttestedKey {
        // Cheap structural checks first; the chain, the costly one, last. Every check must pass.
        let attestation = try AppleAttestationObject(bytes: object)
        guard attestation.fmt == "apple-appattest" else {
            throw AttestationFailure.invalid("attestation format is not apple-appattest")
        }
        let authData = try AppleAuthenticatorData(bytes: attestation.authData)
        try Self.checkRPIDHash(authData, policy: policy)
        guard authData.counter == 0 else { throw AttestationFailure.invalid("counter is not 0") }
        guard authData.credentialID != nil else {
            throw AttestationFailure.invalid("authenticator data has no attested credential data")
        }
        guard authData.aaguid == policy.environment.aaguid else {
            throw AttestationFailure.invalid("AAGUID is not the \(policy.environment.rawValue) environment's")
        }
        guard authData.credentialID == keyID else {
            throw AttestationFailure.invalid("credential ID does not match the key ID")
        }

        let chain = try Self.certificates(attestation.x5c)
        let leaf = chain[0]
        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw AttestationFailure.invalid("credential certificate's key is not P-256")
        }
        let publicKey = Array(leafKey.x963Representation)
        guard Array(SHA256.hash(data: publicKey)) == keyID else {
            throw AttestationFailure.invalid("key ID is not the SHA-256 of the credential certificate's key")
        }
        let nonce = Array(SHA256.hash(data: attestation.authData + clientDataHash))
        guard try AppleNonceExtension.nonce(in: leaf) == nonce else {
            throw AttestationFailure.invalid("nonce does not match")
        }
        try await verifyChain(leaf: leaf, intermediates: chain.dropFirst(), at: time)
        return AttestedKey(keyID: keyID, publicKey: publicKey, counter: 0)
    }

    /// Verifies an assertion (CBOR map of `signature` and `authenticatorData`) over `clientData`
    /// against `key`, attested before.
    ///
    /// - Returns: The assertion's counter, to store as the key's newest.
    /// - Throws: `AttestationFailure(.replayed, …)` when the counter is not greater than `key.counter`;
    ///   `AttestationFailure(.invalid, …)` for every other failed check.
    public func verifyAssertion(
        _ assertion: [UInt8], clientData: [UInt8], key: AttestedKey, policy: AppleAppAttestPolicy
    ) throws -> UInt32 {
        let parsed = try AppleAssertion(bytes: assertion)
        let authData = try AppleAuthenticatorData(bytes: parsed.authenticatorData)
        try Self.checkRPIDHash(authData, policy: policy)
        guard let publicKey = try? P256.Signing.PublicKey(x963Representation: key.publicKey) else {
            throw AttestationFailure.invalid("attested key is not an X9.63 P-256 key")
        }
        guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: parsed.signature) else {
            throw AttestationFailure.invalid("assertion signature is not a DER ECDSA signature")
        }
        // The device signs nonce = SHA-256(authenticatorData ‖ SHA-256(clientData)) with ECDSA-SHA256,
        // hashing the nonce once more (SecKeyCreateSignature with .ecdsaSignatureMessageX962SHA256):
        // so the nonce is passed as a message, which isValidSignature hashes, never as a digest.
        let nonce = Array(SHA256.hash(data: parsed.authenticatorData + Array(SHA256.hash(data: clientData))))
        guard publicKey.isValidSignature(signature, for: nonce) else {
            throw AttestationFailure.invalid("assertion signature does not verify")
        }
        // After the signature, so .replayed only ever names a genuine assertion seen before.
        guard authData.counter > key.counter else {
            throw AttestationFailure(.replayed, "assertion counter did not grow")
        }
        return authData.counter
    }

    /// Throws unless the evidence's RP ID hash is SHA-256 of the policy's App ID.
    private static func checkRPIDHash(_ authData: AppleAuthenticatorData, policy: AppleAppAttestPolicy) throws {
        guard authData.rpIDHash == Array(SHA256.hash(data: Array(policy.appID.utf8))) else {
            throw AttestationFailure.invalid("RP ID hash does not match \(policy.appID)")
        }
    }

    /// The x5c entries parsed as certificates, leaf first; at least one.
    private static func certificates(_ x5c: [[UInt8]]) throws -> [Certificate] {
        guard !x5c.isEmpty else { throw AttestationFailure.invalid("attestation statement x5c is empty") }
        return try x5c.enumerated().map { index, der in
            do {
                return try Certificate(derEncoded: der)
            } catch {
                throw AttestationFailure.invalid("x5c certificate \(index) is not a DER X.509 certificate")
            }
        }
    }

    /// Throws unless `leaf` chains through `intermediates` to a trusted root under RFC 5280 at `time`.
    private func verifyChain(leaf: Certificate, intermediates: ArraySlice<Certificate>, at time: Date) async throws {
        var verifier = Verifier(rootCertificates: CertificateStore(trustedRoots)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates))
        guard case .validCertificate = result else {
            throw AttestationFailure.invalid("certificate chain does not lead to a trusted root")
        }
    }
}
