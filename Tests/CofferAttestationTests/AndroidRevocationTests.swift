@testable import AttestationTestSupport
import CofferAttestation
import Crypto
import XCTest

final class AndroidRevocationTests: XCTestCase {
    let clientData = Array("coffer-attest-v1\nrevocation".utf8)
    let policy = AndroidKeyAttestationPolicy(
        packageName: AndroidTestKeyDescription.packageName,
        signingCertificateDigests: [AndroidTestKeyDescription.signingDigest],
        minimumSecurityLevel: .trustedEnvironment
    )

    static func list(_ entries: [(serial: String, status: String, reason: String)]) throws -> AndroidRevocationList {
        let body = entries.map { "\"\($0.serial)\": {\"status\": \"\($0.status)\", \"reason\": \"\($0.reason)\"}" }
        return try AndroidRevocationList(json: Array("{\"entries\": {\(body.joined(separator: ", "))}}".utf8))
    }

    func attest(revocations: AndroidRevocationList) async throws -> AttestedKey {
        let authority = try AndroidTestAuthority()
        let description = AndroidTestKeyDescription(challenge: Array(SHA256.hash(data: clientData)))
        let leaf = try authority.leaf(keyDescription: try description.derEncoded(), publicKey: .init(P256.Signing.PrivateKey().publicKey))
        return try await authority.verifier(revocations: revocations).verifyAttestation(
            chain: try authority.chain(leaf: leaf), clientData: clientData, policy: policy, at: AndroidTestAuthority.now
        )
    }

    func testUnrelatedSerialsDoNotRefuse() async throws {
        _ = try await attest(revocations: try Self.list([("abcdef", "REVOKED", "KEY_COMPROMISE")]))
    }

    func testRevokedIntermediateIsRefused() async throws {
        let list = try Self.list([("002C85CD", "REVOKED", "KEY_COMPROMISE")])
        await assertAndroidFailure(.revoked, "certificate 2c85cd is revoked (KEY_COMPROMISE)") {
            _ = try await self.attest(revocations: list)
        }
    }

    func testRevokedLeafIsRefused() async throws {
        let list = try Self.list([("1", "REVOKED", "SOFTWARE_FLAW")])
        await assertAndroidFailure(.revoked, "certificate 1 is revoked (SOFTWARE_FLAW)") {
            _ = try await self.attest(revocations: list)
        }
    }

    func testSuspendedRootSerialIsRefused() async throws {
        let list = try Self.list([("e8fa1963", "SUSPENDED", "UNSPECIFIED")])
        await assertAndroidFailure(.revoked, "certificate e8fa1963 is suspended") {
            _ = try await self.attest(revocations: list)
        }
    }

    func testListParsesAndNormalisesSerials() throws {
        let list = try Self.list([
            ("00C8966FCB2FBB0D7", "REVOKED", "KEY_COMPROMISE"),
            ("0", "SUSPENDED", "CA_COMPROMISE"),
            ("abcDEF", "REVOKED", ""),
        ])
        XCTAssertEqual(list.count, 3)
        XCTAssertEqual(list.entry(forSerial: "c8966fcb2fbb0d7")?.status, "REVOKED")
        XCTAssertEqual(list.entry(forSerial: "0C8966FCB2FBB0D7")?.reason, "KEY_COMPROMISE")
        XCTAssertEqual(list.entry(forSerial: "000")?.status, "SUSPENDED")
        XCTAssertEqual(list.entry(forSerial: "ABCDEF")?.status, "REVOKED")
        XCTAssertNil(list.entry(forSerial: "c8966fcb2fbb0d8"))
        XCTAssertNil(list.entry(forSerial: "not hex"))
        XCTAssertEqual(AndroidRevocationList.empty.count, 0)
        XCTAssertEqual(try AndroidRevocationList(json: Array(#"{"entries": {}}"#.utf8)), .empty)
    }

    func testReasonIsOptionalAndExtraFieldsAreIgnored() throws {
        let list = try AndroidRevocationList(json: Array(#"{"entries": {"1f": {"status": "REVOKED", "expires": "2030-01-01"}}}"#.utf8))
        XCTAssertEqual(list.entry(forSerial: "1F")?.status, "REVOKED")
        XCTAssertNil(list.entry(forSerial: "1F")?.reason)
    }

    func testBadJSONIsRefused() {
        assertAndroidFailureSync(.invalid, "not status JSON") { _ = try AndroidRevocationList(json: Array("{\"entries\": ".utf8)) }
        assertAndroidFailureSync(.invalid, "not status JSON") { _ = try AndroidRevocationList(json: Array("[1, 2]".utf8)) }
        assertAndroidFailureSync(.invalid, "not status JSON") { _ = try AndroidRevocationList(json: Array(#"{"entries": {"1": "REVOKED"}}"#.utf8)) }
        assertAndroidFailureSync(.invalid, "not status JSON") { _ = try AndroidRevocationList(json: []) }
    }

    func testTooLargeListIsRefusedBeforeParsing() {
        let large = [UInt8](repeating: 0x20, count: 16 * 1024 * 1024 + 1)
        assertAndroidFailureSync(.invalid, "larger than 16 MiB") { _ = try AndroidRevocationList(json: large) }
    }

    func testNonHexSerialIsRefused() {
        assertAndroidFailureSync(.invalid, "not hexadecimal") { _ = try Self.list([("12g4", "REVOKED", "X")]) }
        assertAndroidFailureSync(.invalid, "not hexadecimal") { _ = try Self.list([("", "REVOKED", "X")]) }
        assertAndroidFailureSync(.invalid, "not hexadecimal") { _ = try Self.list([("0x1f", "REVOKED", "X")]) }
    }

    func testUnknownStatusAndDuplicateSerialAreRefused() {
        assertAndroidFailureSync(.invalid, "unknown status for serial 1f") { _ = try Self.list([("1f", "VALID", "X")]) }
        assertAndroidFailureSync(.invalid, "lists serial 1f twice") {
            _ = try Self.list([("1f", "REVOKED", "X"), ("001F", "SUSPENDED", "Y")])
        }
    }

    func testReasonThatIsNotACodeStaysOutOfTheDetail() async throws {
        let list = try AndroidRevocationList(json: Array(#"{"entries": {"1": {"status": "REVOKED", "reason": "line\nbreak"}}}"#.utf8))
        await assertAndroidFailure(.revoked, "certificate 1 is revoked") { _ = try await self.attest(revocations: list) }
    }
}
