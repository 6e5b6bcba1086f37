@testable import AttestationTestSupport
import CofferAttestation
import CofferFormat
import Crypto
import XCTest

/// Apple's assertion checks: signature over the nonce, RP ID, growing counter.
final class AppleAssertionTests: XCTestCase {
    private let policy = AppleTestAuthority.policy
    private let verifier = AppleAppAttestVerifier(trustedRoots: [])
    private let device = AppleTestAuthority.Device()
    private let clientData = AttestationClientData.keyRequest(keyID: "model-key-1", devicePublicKey: Array(repeating: 5, count: 32))

    private var key: AttestedKey { AttestedKey(keyID: device.keyID, publicKey: device.publicKey, counter: 0) }

    private func expectFailure(
        _ expected: AttestationFailure, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> UInt32
    ) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual(error as? AttestationFailure, expected, file: file, line: line)
        }
    }

    func testValidAssertionsAreAcceptedWhileTheCounterGrows() throws {
        var key = self.key
        for counter: UInt32 in [1, 2, 10] {
            let assertion = try AppleTestAuthority.assertion(device: device, clientData: clientData, counter: counter)
            let accepted = try verifier.verifyAssertion(assertion, clientData: clientData, key: key, policy: policy)
            XCTAssertEqual(accepted, counter)
            key = AttestedKey(keyID: key.keyID, publicKey: key.publicKey, counter: accepted)
        }
    }

    func testSameCounterIsReplayed() throws {
        let assertion = try AppleTestAuthority.assertion(device: device, clientData: clientData, counter: 3)
        let seen = AttestedKey(keyID: device.keyID, publicKey: device.publicKey, counter: 3)
        expectFailure(AttestationFailure(.replayed, "assertion counter did not grow")) {
            try verifier.verifyAssertion(assertion, clientData: clientData, key: seen, policy: policy)
        }
    }

    func testSmallerCounterIsReplayed() throws {
        let assertion = try AppleTestAuthority.assertion(device: device, clientData: clientData, counter: 2)
        let seen = AttestedKey(keyID: device.keyID, publicKey: device.publicKey, counter: 3)
        expectFailure(AttestationFailure(.replayed, "assertion counter did not grow")) {
            try verifier.verifyAssertion(assertion, clientData: clientData, key: seen, policy: policy)
        }
    }

    func testSignatureByAnotherKeyIsRefused() throws {
        let assertion = try AppleTestAuthority.assertion(
            device: device, clientData: clientData, counter: 1, signer: P256.Signing.PrivateKey())
        expectFailure(.invalid("assertion signature does not verify")) {
            try verifier.verifyAssertion(assertion, clientData: clientData, key: key, policy: policy)
        }
    }

    func testSignatureThatIsNotDERIsRefused() throws {
        let authData = try AppleAssertion(bytes: try AppleTestAuthority.assertion(device: device, clientData: clientData, counter: 1)).authenticatorData
        let assertion = CBORWriter.encode(CBORWriter.map([("signature", .bytes([0x30, 0x00])), ("authenticatorData", .bytes(authData))]))
        expectFailure(.invalid("assertion signature is not a DER ECDSA signature")) {
            try verifier.verifyAssertion(assertion, clientData: clientData, key: key, policy: policy)
        }
    }

    func testAssertionOverOtherClientDataIsRefused() throws {
        let assertion = try AppleTestAuthority.assertion(device: device, clientData: clientData, counter: 1)
        let other = AttestationClientData.keyRequest(keyID: "model-key-2", devicePublicKey: Array(repeating: 5, count: 32))
        expectFailure(.invalid("assertion signature does not verify")) {
            try verifier.verifyAssertion(assertion, clientData: other, key: key, policy: policy)
        }
    }

    func testAssertionForAnotherAppIsRefused() throws {
        let assertion = try AppleTestAuthority.assertion(
            device: device, clientData: clientData, counter: 1, appID: "TEAMID1234.com.example.other")
        expectFailure(.invalid("RP ID hash does not match TEAMID1234.com.example.app")) {
            try verifier.verifyAssertion(assertion, clientData: clientData, key: key, policy: policy)
        }
    }

    func testStoredKeyThatIsNotP256IsRefused() throws {
        let assertion = try AppleTestAuthority.assertion(device: device, clientData: clientData, counter: 1)
        let broken = AttestedKey(keyID: device.keyID, publicKey: [0x04, 1, 2], counter: 0)
        expectFailure(.invalid("attested key is not an X9.63 P-256 key")) {
            try verifier.verifyAssertion(assertion, clientData: clientData, key: broken, policy: policy)
        }
    }
}
