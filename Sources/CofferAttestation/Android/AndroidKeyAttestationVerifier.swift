import Crypto
import Foundation
import SwiftASN1
import X509

/// Checks Android hardware key attestation chains and the assertions of attested keys
/// (docs/ATTESTATION.md).
///
/// An attestation is the certificate chain Android Keystore returns for a P-256 key the app
/// generated with the SHA-256 of its client data as attestation challenge. The chain must lead
/// to one of the trusted roots at the time given (RFC 5280 as Android chains meet it, see
/// `AndroidChainPolicy`); its leaf, and only its leaf, carries the ``AndroidKeyDescription``
/// whose challenge, security levels and application ID must satisfy the
/// ``AndroidKeyAttestationPolicy``; no certificate of the chain may be on the
/// ``AndroidRevocationList``. Later requests are signed by that key over their client data and
/// a growing counter (``verifyAssertion(signature:clientData:counter:key:)``).
///
/// Security levels: both `attestationSecurityLevel` (where the attestation was produced) and
/// `keyMintSecurityLevel` (where the key lives) must reach the policy's minimum; on real devices
/// the two are equal, and a key held in software under a hardware attestation would not be
/// hardware-backed.
///
/// Application ID: Keystore (the Android system, not the TEE) writes `attestationApplicationId`
/// into the software-enforced list on every current device; a hardware-enforced one is used
/// instead when present. It is as trustworthy as the device's verified boot.
///
/// Stricter than Google's reference verifier (android/keyattestation) in three ways, each a
/// choice to revisit with data from the field: the leaf's own validity period is checked; an
/// expired certificate is refused in factory-provisioned chains too (their 2016–2018
/// intermediates expire from May 2026 on); and chains with an app-generated attestation key
/// (`PURPOSE_ATTEST_KEY`, an extension below the leaf) are refused.
public struct AndroidKeyAttestationVerifier: Sendable {
    /// Google's hardware attestation roots: the RSA-4096 "Google Hardware Attestation Root" key in
    /// its 2022, 2021, 2019 and 2016 issuances, and the ECDSA P-384 "Key Attestation CA1". The PEM
    /// text, sources and SHA-256 fingerprints are in `AndroidGoogleRoots.swift`.
    public static let googleRoots: [Certificate] = AndroidGoogleRoots.pems.compactMap {
        try? Certificate(pemEncoded: $0)
    }

    /// The largest chain accepted; Android's have three to five certificates.
    static let maximumChainLength = 8
    /// The largest certificate accepted.
    static let maximumCertificateSize = 16 * 1024
    /// The attestation extension, 1.3.6.1.4.1.11129.2.1.17.
    static let extensionOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]

    /// The roots a chain must lead to.
    let trustedRoots: [Certificate]
    /// The serials refused as revoked or suspended.
    let revocations: AndroidRevocationList

    /// A verifier trusting `trustedRoots` (Google's by default) and refusing the serials of `revocations`.
    public init(
        trustedRoots: [Certificate] = AndroidKeyAttestationVerifier.googleRoots,
        revocations: AndroidRevocationList = .empty
    ) {
        self.trustedRoots = trustedRoots
        self.revocations = revocations
    }

    /// Verifies an attestation chain (DER certificates, leaf first, root last or omitted) whose
    /// leaf's attestation challenge is SHA-256(`clientData`), for `policy`, at `time`.
    ///
    /// - Returns: The attested key: its ID (SHA-256 of the key), the P-256 key in X9.63
    ///   uncompressed form, counter 0, and the serials of the verified chain, leaf to root
    ///   (lowercase hex, no leading zeros).
    /// - Throws: ``AttestationFailure`` — `invalid` with one line naming the failed check,
    ///   `revoked` if a certificate of the chain is on the revocation list.
    public func verifyAttestation(
        chain: [[UInt8]],
        clientData: [UInt8],
        policy: AndroidKeyAttestationPolicy,
        at time: Date
    ) async throws -> AttestedKey {
        try await verifyAttestation(
            chain: chain,
            expectedChallenge: Array(SHA256.hash(data: clientData)),
            policy: policy,
            at: time
        )
    }

    /// Verifies an attestation chain whose leaf's attestation challenge is `expectedChallenge`
    /// itself, for evidence not bound to Coffer's client data (published device chains, tools).
    ///
    /// Apart from the challenge, the checks and results are those of
    /// ``verifyAttestation(chain:clientData:policy:at:)``.
    public func verifyAttestation(
        chain: [[UInt8]],
        expectedChallenge: [UInt8],
        policy: AndroidKeyAttestationPolicy,
        at time: Date
    ) async throws -> AttestedKey {
        let certificates = try Self.parse(chain: chain)
        let verified = try await verifiedPath(certificates, at: time)
        let serials = verified.map(AndroidSerialNumber.hex(of:))
        try revocations.check(serials: serials)

        guard let leaf = verified.first else { throw AttestationFailure.invalid("Android attestation chain is empty") }
        for certificate in verified.dropFirst() where certificate.extensions[oid: Self.extensionOID] != nil {
            throw AttestationFailure.invalid("a CA certificate of the Android attestation chain carries an attestation extension")
        }
        guard let publicKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw AttestationFailure.invalid("the attested Android key is not a P-256 key")
        }
        guard let attestation = leaf.extensions[oid: Self.extensionOID] else {
            throw AttestationFailure.invalid("the Android attestation leaf has no key attestation extension")
        }
        let description = try AndroidKeyDescription(derEncoded: Array(attestation.value))
        try description.check(expectedChallenge: expectedChallenge, policy: policy)

        let x963 = Array(publicKey.x963Representation)
        return AttestedKey(keyID: Array(SHA256.hash(data: x963)), publicKey: x963, counter: 0, certificateSerials: serials)
    }
}
