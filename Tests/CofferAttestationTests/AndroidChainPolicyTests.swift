@testable import AttestationTestSupport
import CofferAttestation
import Crypto
import Foundation
import X509
import XCTest

/// The basic-constraints rules of Android chains: four-certificate chains as factory-provisioned
/// devices send them (leaf, per-device batch certificate, Google intermediate, root).
final class AndroidChainPolicyTests: XCTestCase {
    let clientData = Array("coffer-attest-v1\nchain policy".utf8)
    let policy = AndroidKeyAttestationPolicy(
        packageName: AndroidTestKeyDescription.packageName,
        signingCertificateDigests: [AndroidTestKeyDescription.signingDigest],
        minimumSecurityLevel: .trustedEnvironment
    )

    var keyDescription: [UInt8] {
        get throws { try AndroidTestKeyDescription(challenge: Array(SHA256.hash(data: clientData))).derEncoded() }
    }

    func verify(_ chain: [Certificate], authority: AndroidTestAuthority) async throws -> AttestedKey {
        try await authority.verifier().verifyAttestation(
            chain: try chain.map(AndroidTestAuthority.der), clientData: clientData, policy: policy, at: AndroidTestAuthority.now
        )
    }

    func testBatchCertificateWithoutTheCAFlagIsAccepted() async throws {
        // Older factory chains (Sony Xperia 10 III): the certificate signing the leaf says CA:FALSE.
        let authority = try AndroidTestAuthority()
        let batchKey = P256.Signing.PrivateKey()
        let (batch, batchName) = try authority.batch(key: batchKey, isCA: false)
        let leaf = try AndroidTestAuthority.leaf(
            keyDescription: try keyDescription, publicKey: .init(P256.Signing.PrivateKey().publicKey), issuerName: batchName, issuerKey: batchKey
        )
        let key = try await verify([leaf, batch, authority.intermediate, authority.root], authority: authority)
        XCTAssertEqual(key.certificateSerials, ["1", "ba7", "2c85cd", "e8fa1963"])
    }

    func testNonCAAboveTheBatchCertificateIsRefused() async throws {
        let authority = try AndroidTestAuthority()
        let middleKey = P256.Signing.PrivateKey()
        let middleName = try DistinguishedName { CommonName("Not a CA") }
        let middle = try AndroidTestAuthority.caCertificate(
            serial: [0x33], key: middleKey, subject: middleName, issuer: authority.intermediateName,
            issuerKey: authority.intermediateKey, extraExtension: nil, isCA: false
        )
        let batchKey = P256.Signing.PrivateKey()
        let batchName = try DistinguishedName { CommonName("Batch") }
        let batch = try AndroidTestAuthority.caCertificate(
            serial: [0x34], key: batchKey, subject: batchName, issuer: middleName, issuerKey: middleKey, extraExtension: nil
        )
        let leaf = try AndroidTestAuthority.leaf(
            keyDescription: try keyDescription, publicKey: .init(P256.Signing.PrivateKey().publicKey), issuerName: batchName, issuerKey: batchKey
        )
        await assertAndroidFailure(.invalid, "does not lead to a trusted root") {
            _ = try await self.verify([leaf, batch, middle, authority.intermediate, authority.root], authority: authority)
        }
    }

    func testPathLengthIsEnforced() async throws {
        for (maxPathLength, accepted) in [(0, false), (1, true)] {
            let authority = try AndroidTestAuthority()
            let middleKey = P256.Signing.PrivateKey()
            let middleName = try DistinguishedName { CommonName("Droid CA2") }
            let middle = try AndroidTestAuthority.caCertificate(
                serial: [0x35], key: middleKey, subject: middleName, issuer: authority.rootName,
                issuerKey: authority.rootKey, extraExtension: nil, maxPathLength: maxPathLength
            )
            let batchKey = P256.Signing.PrivateKey()
            let batchName = try DistinguishedName { CommonName("Droid CA3") }
            let batch = try AndroidTestAuthority.caCertificate(
                serial: [0x36], key: batchKey, subject: batchName, issuer: middleName, issuerKey: middleKey, extraExtension: nil
            )
            let leaf = try AndroidTestAuthority.leaf(
                keyDescription: try keyDescription, publicKey: .init(P256.Signing.PrivateKey().publicKey), issuerName: batchName, issuerKey: batchKey
            )
            if accepted {
                _ = try await verify([leaf, batch, middle, authority.root], authority: authority)
            } else {
                await assertAndroidFailure(.invalid, "does not lead to a trusted root") {
                    _ = try await self.verify([leaf, batch, middle, authority.root], authority: authority)
                }
            }
        }
    }

    func testLeafForgedWithAnAttestedKeyIsRefused() async throws {
        // An app attests a key of its own, then signs a leaf claiming another package and challenge
        // with it. The attested key's certificate stands where a batch certificate would, so only
        // the "extension in the leaf only" rule refuses the chain.
        let authority = try AndroidTestAuthority()
        let attackerKey = P256.Signing.PrivateKey()
        var attackerDescription = AndroidTestKeyDescription(challenge: [UInt8](repeating: 0, count: 32))
        attackerDescription.packages = [("com.attacker.app", 1)]
        let attackerLeaf = try authority.leaf(keyDescription: try attackerDescription.derEncoded(), publicKey: .init(attackerKey.publicKey))
        let forged = try AndroidTestAuthority.leaf(
            keyDescription: try keyDescription, publicKey: .init(P256.Signing.PrivateKey().publicKey),
            issuerName: attackerLeaf.subject, issuerKey: attackerKey, subject: try DistinguishedName { CommonName("Forged Key") }
        )
        await assertAndroidFailure(.invalid, "a CA certificate of the Android attestation chain carries an attestation extension") {
            _ = try await self.verify([forged, attackerLeaf, authority.intermediate, authority.root], authority: authority)
        }
    }
}
