@testable import AttestationTestSupport
import CofferAttestation
import CofferFormat
import Crypto
import XCTest

final class AndroidAssertionTests: XCTestCase {
    let deviceKey = P256.Signing.PrivateKey()
    let clientData = AttestationClientData.keyRequest(keyID: "model-key-1", devicePublicKey: [UInt8](repeating: 0x5E, count: 32))
    let serials = ["1", "2c85cd", "e8fa1963"]

    var attested: AttestedKey {
        let publicKey = Array(deviceKey.publicKey.x963Representation)
        return AttestedKey(keyID: Array(SHA256.hash(data: publicKey)), publicKey: publicKey, counter: 0, certificateSerials: serials)
    }

    func sign(_ data: [UInt8], counter: UInt32, with key: P256.Signing.PrivateKey? = nil) throws -> [UInt8] {
        let message = data + [UInt8(counter >> 24), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)]
        return Array(try (key ?? deviceKey).signature(for: message).derRepresentation)
    }

    func testGrowingCountersAreAccepted() throws {
        let verifier = AndroidKeyAttestationVerifier()
        var key = attested
        for counter: UInt32 in [1, 2, 0x0102_0304, .max] {
            let accepted = try verifier.verifyAssertion(
                signature: try sign(clientData, counter: counter), clientData: clientData, counter: counter, key: key
            )
            XCTAssertEqual(accepted, counter)
            key = AttestedKey(keyID: key.keyID, publicKey: key.publicKey, counter: accepted, certificateSerials: key.certificateSerials)
        }
    }

    func testSameOrLowerCounterIsReplayed() throws {
        let verifier = AndroidKeyAttestationVerifier()
        let key = AttestedKey(keyID: attested.keyID, publicKey: attested.publicKey, counter: 5, certificateSerials: serials)
        for counter: UInt32 in [5, 4, 0] {
            let signature = try sign(clientData, counter: counter)
            assertAndroidFailureSync(.replayed, "counter \(counter) is not above 5") {
                _ = try verifier.verifyAssertion(signature: signature, clientData: self.clientData, counter: counter, key: key)
            }
        }
    }

    func testSignatureByAnotherKeyIsRefused() throws {
        let signature = try sign(clientData, counter: 1, with: P256.Signing.PrivateKey())
        assertAndroidFailureSync(.invalid, "signature does not verify") {
            _ = try AndroidKeyAttestationVerifier().verifyAssertion(signature: signature, clientData: self.clientData, counter: 1, key: self.attested)
        }
    }

    func testSignatureOverAnotherCounterIsRefused() throws {
        let signature = try sign(clientData, counter: 1)
        assertAndroidFailureSync(.invalid, "signature does not verify") {
            _ = try AndroidKeyAttestationVerifier().verifyAssertion(signature: signature, clientData: self.clientData, counter: 2, key: self.attested)
        }
    }

    func testMalformedSignatureIsRefused() {
        assertAndroidFailureSync(.invalid, "not a DER ECDSA signature") {
            _ = try AndroidKeyAttestationVerifier().verifyAssertion(signature: [0x30, 0x01], clientData: self.clientData, counter: 1, key: self.attested)
        }
    }

    func testOtherClientDataIsRefused() throws {
        let signature = try sign(clientData, counter: 1)
        let other = AttestationClientData.keyRequest(keyID: "model-key-2", devicePublicKey: [UInt8](repeating: 0x5E, count: 32))
        assertAndroidFailureSync(.invalid, "signature does not verify") {
            _ = try AndroidKeyAttestationVerifier().verifyAssertion(signature: signature, clientData: other, counter: 1, key: self.attested)
        }
    }

    func testSerialRevokedAfterAttestationIsRefused() throws {
        let list = try AndroidRevocationTests.list([("2C85CD", "REVOKED", "KEY_COMPROMISE")])
        let signature = try sign(clientData, counter: 1)
        assertAndroidFailureSync(.revoked, "certificate 2c85cd is revoked") {
            _ = try AndroidKeyAttestationVerifier(revocations: list)
                .verifyAssertion(signature: signature, clientData: self.clientData, counter: 1, key: self.attested)
        }
    }

    func testKeyThatIsNotP256IsRefused() throws {
        let broken = AttestedKey(keyID: [], publicKey: [0x04, 1, 2, 3], counter: 0)
        let signature = try sign(clientData, counter: 1)
        assertAndroidFailureSync(.invalid, "not a P-256 key") {
            _ = try AndroidKeyAttestationVerifier().verifyAssertion(signature: signature, clientData: self.clientData, counter: 1, key: broken)
        }
    }

    func testAttestedKeyFromAChainSignsAssertions() async throws {
        let authority = try AndroidTestAuthority()
        let attestationData = AttestationClientData.attestation(challenge: [1, 2, 3], devicePublicKey: [4, 5, 6])
        let description = AndroidTestKeyDescription(challenge: Array(SHA256.hash(data: attestationData)))
        let leaf = try authority.leaf(keyDescription: try description.derEncoded(), publicKey: .init(deviceKey.publicKey))
        let policy = AndroidKeyAttestationPolicy(
            packageName: AndroidTestKeyDescription.packageName,
            signingCertificateDigests: [AndroidTestKeyDescription.signingDigest],
            minimumSecurityLevel: .trustedEnvironment
        )
        let verifier = authority.verifier()
        let key = try await verifier.verifyAttestation(
            chain: try authority.chain(leaf: leaf), clientData: attestationData, policy: policy, at: AndroidTestAuthority.now
        )
        XCTAssertEqual(try verifier.verifyAssertion(signature: try sign(clientData, counter: 1), clientData: clientData, counter: 1, key: key), 1)
    }
}
