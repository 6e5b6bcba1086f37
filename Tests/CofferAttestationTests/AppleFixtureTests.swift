@testable import AttestationTestSupport
import CofferAttestation
import Crypto
import Foundation
import X509
import XCTest

/// Genuine App Attest evidence from public test suites (Fixtures/Apple/README.md), verified with
/// Apple's real root at the time it was recorded.
final class AppleFixtureTests: XCTestCase {
    /// One recorded attestation and the assertions that followed it.
    struct Fixture: Decodable {
        struct Assertion: Decodable {
            let assertionBase64: String
            let clientDataBase64: String
            let counter: UInt32
        }

        let teamIdentifier: String
        let bundleIdentifier: String
        let environment: String
        let keyIdBase64: String?
        let keyIdHex: String?
        let attestationBase64: String
        let clientDataBase64: String?
        let clientDataHashUTF8: String?
        let timestamp: String
        let assertions: [Assertion]?

        var policy: AppleAppAttestPolicy {
            get throws {
                let environment = try XCTUnwrap(AppleAppAttestPolicy.Environment(rawValue: environment))
                return AppleAppAttestPolicy(teamID: teamIdentifier, bundleID: bundleIdentifier, environment: environment)
            }
        }

        var keyID: [UInt8] {
            get throws {
                if let keyIdBase64 { return try decode(keyIdBase64) }
                let hex = Array(try XCTUnwrap(keyIdHex).utf8)
                return try stride(from: 0, to: hex.count, by: 2).map {
                    try XCTUnwrap(UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16))
                }
            }
        }

        var time: Date {
            get throws {
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                return try XCTUnwrap(formatter.date(from: timestamp))
            }
        }
    }

    static let veehaitchSamples = [
        "ios-14.2", "ios-14.3-beta-2", "ios-14.3-beta-3", "ios-14.3", "ios-14.4-beta-1", "ios-14.4-beta-2", "ios-14.4",
    ]

    static func decode(_ base64: String) throws -> [UInt8] { Array(try XCTUnwrap(Data(base64Encoded: base64))) }

    func load(_ name: String) throws -> Fixture {
        let url = try XCTUnwrap(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures/Apple"))
        return try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
    }

    func testAppleRootIsTheEmbeddedPEMWithItsPublishedFingerprint() throws {
        let root = AppleAppAttestVerifier.appleRoot
        XCTAssertEqual(root.subject, root.issuer)
        XCTAssertEqual(root.subject.description, "ST=California,O=Apple Inc.,CN=Apple App Attestation Root CA")
        let fingerprint = SHA256.hash(data: try AppleTestAuthority.der(root)).map { String(format: "%02X", $0) }.joined(separator: ":")
        XCTAssertEqual(fingerprint, "1C:B9:82:3B:A2:8B:A6:AD:2D:33:A0:06:94:1D:E2:AE:4F:51:3E:F1:D4:E8:31:B9:F7:E0:FA:7B:62:42:C9:32")
    }

    func testRecordedDeviceAttestationsAndAssertionsVerifyWithApplesRoot() async throws {
        let verifier = AppleAppAttestVerifier()
        for name in Self.veehaitchSamples {
            let fixture = try load(name)
            let clientData = try Self.decode(try XCTUnwrap(fixture.clientDataBase64))
            var key = try await verifier.verifyAttestation(
                try Self.decode(fixture.attestationBase64), keyID: try fixture.keyID, clientData: clientData,
                policy: try fixture.policy, at: try fixture.time)
            XCTAssertEqual(key.keyID, try fixture.keyID, name)
            XCTAssertEqual(key.counter, 0, name)
            for assertion in fixture.assertions ?? [] {
                let counter = try verifier.verifyAssertion(
                    try Self.decode(assertion.assertionBase64), clientData: try Self.decode(assertion.clientDataBase64),
                    key: key, policy: try fixture.policy)
                XCTAssertEqual(counter, assertion.counter, name)
                key = AttestedKey(keyID: key.keyID, publicKey: key.publicKey, counter: counter)
            }
        }
    }

    func testRecordedAttestationIsRefusedForOtherPoliciesTimesAndClientData() async throws {
        let fixture = try load("ios-14.4")
        let object = try Self.decode(fixture.attestationBase64)
        let clientData = try Self.decode(try XCTUnwrap(fixture.clientDataBase64))
        let verifier = AppleAppAttestVerifier()
        let production = AppleAppAttestPolicy(teamID: fixture.teamIdentifier, bundleID: fixture.bundleIdentifier, environment: .production)
        let cases: [(AppleAppAttestPolicy, Date, [UInt8], String)] = [
            (production, try fixture.time, clientData, "AAGUID is not the production environment's"),
            (try fixture.policy, try fixture.time + 3 * 86_400, clientData, "certificate chain does not lead to a trusted root"),
            (try fixture.policy, try fixture.time, clientData + [0], "nonce does not match"),
        ]
        for (policy, time, data, detail) in cases {
            do {
                _ = try await verifier.verifyAttestation(object, keyID: try fixture.keyID, clientData: data, policy: policy, at: time)
                XCTFail("accepted; expected \(detail)")
            } catch {
                XCTAssertEqual(error as? AttestationFailure, .invalid(detail))
            }
        }
    }

    func testRecordedAssertionIsReplayedAgainstItsOwnCounter() async throws {
        let fixture = try load("ios-14.4")
        let assertion = try XCTUnwrap(fixture.assertions?.first)
        let verifier = AppleAppAttestVerifier()
        let key = try await verifier.verifyAttestation(
            try Self.decode(fixture.attestationBase64), keyID: try fixture.keyID,
            clientData: try Self.decode(try XCTUnwrap(fixture.clientDataBase64)), policy: try fixture.policy, at: try fixture.time)
        let seen = AttestedKey(keyID: key.keyID, publicKey: key.publicKey, counter: assertion.counter)
        XCTAssertThrowsError(try verifier.verifyAssertion(
            try Self.decode(assertion.assertionBase64), clientData: try Self.decode(assertion.clientDataBase64),
            key: seen, policy: try fixture.policy)) {
            XCTAssertEqual(($0 as? AttestationFailure)?.code, .replayed)
        }
    }

    func testApplesPublishedSampleWithAnAuthenticatorDataExtensionsMapVerifies() async throws {
        // Apple's sample passed the challenge itself as clientDataHash, and its authenticator data ends
        // with an extensions map while the extensions flag is clear.
        let fixture = try load("apple-guide-sample")
        let object = try Self.decode(fixture.attestationBase64)
        let authData = try AppleAuthenticatorData(bytes: try AppleAttestationObject(bytes: object).authData)
        XCTAssertEqual(authData.flags & AppleAuthenticatorData.extensionsFlag, 0)
        XCTAssertNotNil(authData.extensions)
        let key = try await AppleAppAttestVerifier().verifyAttestation(
            object, keyID: try fixture.keyID, clientDataHash: Array(try XCTUnwrap(fixture.clientDataHashUTF8).utf8),
            policy: try fixture.policy, at: try fixture.time)
        XCTAssertEqual(Array(SHA256.hash(data: key.publicKey)), try fixture.keyID)
    }
}
