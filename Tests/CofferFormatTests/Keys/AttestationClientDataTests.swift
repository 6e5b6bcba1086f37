import CofferFormat
import XCTest

final class AttestationClientDataTests: XCTestCase {
    func testAttestationClientDataIsLabelChallengeAndDeviceKey() {
        let data = AttestationClientData.attestation(challenge: [1, 2], devicePublicKey: [3])
        XCTAssertEqual(data, Array("coffer-attest-v1\n".utf8) + [1, 2, 3])
    }

    func testKeyRequestClientDataIsLabelKeyIDAndDeviceKey() {
        XCTAssertEqual(AttestationClientData.keyRequest(keyID: "k1", devicePublicKey: [9]), Array("coffer-assert-v1\nk1\n".utf8) + [9])
    }
}
