@testable import AttestationTestSupport
import CofferAttestation
import CofferFormat
import Crypto
import Foundation
import XCTest

/// Each of Apple's attestation checks, with evidence from ``AppleTestAuthority`` broken in one field.
final class AppleAttestationTests: XCTestCase {
    typealias Knobs = AppleTestAuthority.Knobs

    private let clientData = AttestationClientData.attestation(challenge: Array(repeating: 7, count: 32), devicePublicKey: Array(repeating: 9, count: 32))
    private let policy = AppleTestAuthority.policy

    /// Verifies an attestation the authority built with `knobs`, at `time`, for `policy`.
    private func verify(
        _ knobs: Knobs = Knobs(), authority: AppleTestAuthority? = nil, device: AppleTestAuthority.Device = .init(),
        keyID: [UInt8]? = nil, policy: AppleAppAttestPolicy? = nil, at time: Date = AppleTestAuthority.now
    ) async throws -> AttestedKey {
        let authority = try authority ?? AppleTestAuthority()
        let object = try authority.attestation(device: device, clientData: clientData, knobs: knobs)
        return try await AppleAppAttestVerifier(trustedRoots: [authority.root]).verifyAttestation(
            object, keyID: keyID ?? device.keyID, clientData: clientData, policy: policy ?? self.policy, at: time)
    }

    /// Expects `body` to throw `AttestationFailure(code, detail)`.
    private func expectFailure(
        _ detail: String, code: AttestationFailure.Code = .invalid, file: StaticString = #filePath, line: UInt = #line,
        _ body: () async throws -> AttestedKey
    ) async {
        do {
            _ = try await body()
            XCTFail("accepted; expected \(detail)", file: file, line: line)
        } catch let failure as AttestationFailure {
            XCTAssertEqual(failure, AttestationFailure(code, detail), file: file, line: line)
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
    }

    func testValidAttestationIsAcceptedWithKeyIDPublicKeyAndCounterZero() async throws {
        let device = AppleTestAuthority.Device()
        let key = try await verify(device: device)
        XCTAssertEqual(key.keyID, device.keyID)
        XCTAssertEqual(key.publicKey, device.publicKey)
        XCTAssertEqual(key.counter, 0)
    }

    func testDevelopmentEnvironmentIsAcceptedByADevelopmentPolicy() async throws {
        var knobs = Knobs()
        knobs.aaguid = AppleAppAttestPolicy.Environment.development.aaguid
        let development = AppleAppAttestPolicy(teamID: policy.teamID, bundleID: policy.bundleID, environment: .development)
        _ = try await verify(knobs, policy: development)
    }

    func testWrongRPIDIsRefused() async {
        var knobs = Knobs()
        knobs.appID = "OTHERTEAM1.com.example.app"
        await expectFailure("RP ID hash does not match TEAMID1234.com.example.app") { try await verify(knobs) }
    }

    func testNonceOverOtherClientDataIsRefused() async {
        var knobs = Knobs()
        knobs.nonceClientData = AttestationClientData.attestation(challenge: Array(repeating: 8, count: 32), devicePublicKey: [])
        await expectFailure("nonce does not match") { try await verify(knobs) }
    }

    func testLeafFromAnUnrelatedCAIsRefused() async throws {
        var knobs = Knobs()
        knobs.issuer = try AppleTestAuthority(name: "Unrelated")
        await expectFailure("certificate chain does not lead to a trusted root") { try await verify(knobs) }
    }

    func testMissingIntermediateIsRefused() async {
        var knobs = Knobs()
        knobs.includeIntermediate = false
        await expectFailure("certificate chain does not lead to a trusted root") { try await verify(knobs) }
    }

    func testCertificateNotYetValidIsRefused() async {
        var knobs = Knobs()
        knobs.notValidBefore = AppleTestAuthority.now + 60
        knobs.notValidAfter = AppleTestAuthority.now + 86_400
        await expectFailure("certificate chain does not lead to a trusted root") { try await verify(knobs) }
    }

    func testExpiredCertificateIsRefused() async {
        var knobs = Knobs()
        knobs.notValidBefore = AppleTestAuthority.now - 86_400
        knobs.notValidAfter = AppleTestAuthority.now - 60
        await expectFailure("certificate chain does not lead to a trusted root") { try await verify(knobs) }
    }

    func testValidityIsCheckedAtTheGivenTime() async throws {
        // The same evidence, accepted now, is refused two days later when the credential certificate has expired.
        let authority = try AppleTestAuthority()
        _ = try await verify(authority: authority)
        await expectFailure("certificate chain does not lead to a trusted root") {
            try await verify(authority: authority, at: AppleTestAuthority.now + 2 * 86_400)
        }
    }

    func testDevelopmentAAGUIDIsRefusedByAProductionPolicy() async {
        var knobs = Knobs()
        knobs.aaguid = AppleAppAttestPolicy.Environment.development.aaguid
        await expectFailure("AAGUID is not the production environment's") { try await verify(knobs) }
    }

    func testProductionAAGUIDIsRefusedByADevelopmentPolicy() async {
        let development = AppleAppAttestPolicy(teamID: policy.teamID, bundleID: policy.bundleID, environment: .development)
        await expectFailure("AAGUID is not the development environment's") { try await verify(policy: development) }
    }

    func testNonZeroCounterIsRefused() async {
        var knobs = Knobs()
        knobs.counter = 1
        await expectFailure("counter is not 0") { try await verify(knobs) }
    }

    func testCredentialIDOtherThanKeyIDIsRefused() async {
        var knobs = Knobs()
        knobs.credentialID = Array(repeating: 0xAB, count: 32)
        await expectFailure("credential ID does not match the key ID") { try await verify(knobs) }
    }

    func testKeyIDThatIsNotTheHashOfTheCertifiedKeyIsRefused() async {
        // The device claims its own key ID everywhere, but the certificate certifies another key.
        var knobs = Knobs()
        knobs.certifiedKey = P256.Signing.PrivateKey().publicKey
        await expectFailure("key ID is not the SHA-256 of the credential certificate's key") { try await verify(knobs) }
    }

    func testWrongFormatIsRefused() async {
        var knobs = Knobs()
        knobs.fmt = "packed"
        await expectFailure("attestation format is not apple-appattest") { try await verify(knobs) }
    }

    func testOtherTrustedRootsAreNotTrustedByDefault() async throws {
        // The default verifier trusts Apple's root only: the test authority's evidence is refused.
        let authority = try AppleTestAuthority()
        let device = AppleTestAuthority.Device()
        let object = try authority.attestation(device: device, clientData: clientData)
        await expectFailure("certificate chain does not lead to a trusted root") {
            try await AppleAppAttestVerifier().verifyAttestation(
                object, keyID: device.keyID, clientData: clientData, policy: policy, at: AppleTestAuthority.now)
        }
    }

    func testExtensionsMapAfterTheCredentialKeyIsAccepted() async throws {
        // Apple's published sample carries such a map without the extensions flag.
        var knobs = Knobs()
        knobs.authDataTrailer = CBORWriter.encode(CBORWriter.map([("apple_validation_category_01", .bytes([1, 0, 0, 0]))]))
        _ = try await verify(knobs)
    }

    func testBytesAfterTheCredentialKeyThatAreNotAMapAreRefused() async {
        var knobs = Knobs()
        knobs.authDataTrailer = [0x01]
        await expectFailure("authenticator data has bytes after its fields that are not one extensions map") {
            try await verify(knobs)
        }
    }
}
