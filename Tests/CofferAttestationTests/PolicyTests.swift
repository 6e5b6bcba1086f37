import CofferAttestation
import XCTest

final class PolicyTests: XCTestCase {
    func testSecurityLevelsOrderAndNames() {
        XCTAssertLessThan(AndroidKeyAttestationPolicy.SecurityLevel.software, .trustedEnvironment)
        XCTAssertLessThan(AndroidKeyAttestationPolicy.SecurityLevel.trustedEnvironment, .strongBox)
        XCTAssertEqual(AndroidKeyAttestationPolicy.SecurityLevel(name: "strongbox"), .strongBox)
        XCTAssertEqual(AndroidKeyAttestationPolicy.SecurityLevel(name: "tee"), .trustedEnvironment)
        XCTAssertNil(AndroidKeyAttestationPolicy.SecurityLevel(name: "hardware"))
    }

    func testAppleEnvironmentsHaveSixteenByteAAGUIDsAndTheAppIDJoinsTeamAndBundle() {
        XCTAssertEqual(AppleAppAttestPolicy.Environment.production.aaguid, Array("appattest".utf8) + [0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(AppleAppAttestPolicy.Environment.development.aaguid, Array("appattestdevelop".utf8))
        XCTAssertEqual(AppleAppAttestPolicy(teamID: "ABCDE12345", bundleID: "com.x.y", environment: .production).appID, "ABCDE12345.com.x.y")
    }
}
