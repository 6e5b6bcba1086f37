import CofferAttestation
import XCTest

final class ClientDataTests: XCTestCase {
    func testAttestationClientDataIsLabelChallengeAndDeviceKey() {
        let data = AttestationClientData.attestation(challenge: [1, 2], devicePublicKey: [3])
        XCTAssertEqual(data, Array("coffer-attest-v1\n".utf8) + [1, 2, 3])
    }

    func testKeyRequestClientDataIsLabelKeyIDAndDeviceKey() {
        let a = AttestationClientData.keyRequest(keyID: "k1", devicePublicKey: [9])
        XCTAssertEqual(a, Array("coffer-assert-v1\nk1\n".utf8) + [9])
    }

    func testSecurityLevelsOrderAndNames() {
        XCTAssertLessThan(AndroidKeyAttestationPolicy.SecurityLevel.software, .trustedEnvironment)
        XCTAssertEqual(AndroidKeyAttestationPolicy.SecurityLevel(name: "strongbox"), .strongBox)
        XCTAssertNil(AndroidKeyAttestationPolicy.SecurityLevel(name: "hardware"))
        XCTAssertEqual(AppleAppAttestPolicy.Environment.production.aaguid.count, 16)
        XCTAssertEqual(AppleAppAttestPolicy.Environment.development.aaguid.count, 16)
    }
}
