@testable import AttestationTestSupport
import CofferAttestation
import Crypto
import X509
import XCTest

/// The pure parsers a fuzz harness calls: truncation at every length and deterministic byte flips of a
/// valid attestation object never trap, and every refusal is an `AttestationFailure`.
final class AppleParserTests: XCTestCase {
    private let clientData = Array("client data".utf8)

    func testAttestationObjectPartsParse() throws {
        let authority = try AppleTestAuthority()
        let device = AppleTestAuthority.Device()
        let object = try AppleAttestationObject(bytes: try authority.attestation(device: device, clientData: clientData))
        XCTAssertEqual(object.fmt, "apple-appattest")
        XCTAssertEqual(object.x5c.count, 2)
        XCTAssertEqual(object.receipt, Array("receipt".utf8))
        let authData = try AppleAuthenticatorData(bytes: object.authData)
        XCTAssertEqual(authData.rpIDHash, Array(SHA256.hash(data: Array(AppleTestAuthority.policy.appID.utf8))))
        XCTAssertEqual(authData.flags, 0x40)
        XCTAssertEqual(authData.counter, 0)
        XCTAssertEqual(authData.aaguid, AppleAppAttestPolicy.Environment.production.aaguid)
        XCTAssertEqual(authData.credentialID, device.keyID)
        XCTAssertEqual(authData.credentialPublicKey?.count, 77)
        XCTAssertNil(authData.extensions)
    }

    func testAssertionPartsParse() throws {
        let device = AppleTestAuthority.Device()
        let assertion = try AppleAssertion(bytes: try AppleTestAuthority.assertion(device: device, clientData: clientData, counter: 0x0102_0304))
        let authData = try AppleAuthenticatorData(bytes: assertion.authenticatorData)
        XCTAssertEqual(authData.counter, 0x0102_0304)
        XCTAssertNil(authData.credentialID)
        XCTAssertNil(authData.aaguid)
    }

    func testAuthenticatorDataRefusals() {
        let header = Array(repeating: UInt8(0), count: 32)
        func refused(_ bytes: [UInt8], _ detail: String, line: UInt = #line) {
            XCTAssertThrowsError(try AppleAuthenticatorData(bytes: bytes), line: line) {
                XCTAssertEqual($0 as? AttestationFailure, .invalid(detail), line: line)
            }
        }
        refused(Array(header.prefix(36)), "authenticator data is shorter than 37 bytes")
        refused(header + [0x80, 0, 0, 0, 0], "authenticator data's extensions flag is set but no extensions follow")
        refused(header + [0x40, 0, 0, 0, 0, 1], "authenticator data's credential data is truncated")
        // Credential ID length 0xFFFF with two bytes after it.
        refused(header + [0x40, 0, 0, 0, 0] + Array(repeating: 0, count: 16) + [0xFF, 0xFF, 1, 2],
                "authenticator data's credential data is truncated")
        refused(header + [0x40, 0, 0, 0, 0] + Array(repeating: 0, count: 16) + [0, 1, 9, 0x01],
                "authenticator data's credential public key is not a CBOR map")
        refused(header + [0x00, 0, 0, 0, 0, 0xA0, 0xA0],
                "authenticator data has bytes after its fields that are not one extensions map")
    }

    func testAssertionAndObjectStructureRefusals() {
        XCTAssertThrowsError(try AppleAssertion(bytes: CBORWriter.encode(.array([])))) {
            XCTAssertEqual($0 as? AttestationFailure, .invalid("assertion is not a CBOR map"))
        }
        XCTAssertThrowsError(try AppleAssertion(bytes: CBORWriter.encode(CBORWriter.map([("signature", .text("x"))])))) {
            XCTAssertEqual($0 as? AttestationFailure, .invalid("assertion has no signature bytes"))
        }
        let noReceipt = CBORWriter.map([
            ("fmt", .text("apple-appattest")), ("attStmt", CBORWriter.map([("x5c", .array([]))])), ("authData", .bytes([])),
        ])
        XCTAssertThrowsError(try AppleAttestationObject(bytes: CBORWriter.encode(noReceipt))) {
            XCTAssertEqual($0 as? AttestationFailure, .invalid("attestation statement has no receipt bytes"))
        }
        let textCertificate = CBORWriter.map([
            ("fmt", .text("apple-appattest")),
            ("attStmt", CBORWriter.map([("x5c", .array([.text("cert")])), ("receipt", .bytes([]))])), ("authData", .bytes([])),
        ])
        XCTAssertThrowsError(try AppleAttestationObject(bytes: CBORWriter.encode(textCertificate))) {
            XCTAssertEqual($0 as? AttestationFailure, .invalid("attestation statement x5c holds a non-bytes entry"))
        }
    }

    func testTruncatedAttestationIsRefusedAtEveryLength() async throws {
        let authority = try AppleTestAuthority()
        let device = AppleTestAuthority.Device()
        let object = try authority.attestation(device: device, clientData: clientData)
        let verifier = AppleAppAttestVerifier(trustedRoots: [authority.root])
        for length in 0..<object.count {
            let truncated = Array(object.prefix(length))
            XCTAssertThrowsError(try AppleAttestationObject(bytes: truncated))
            do {
                _ = try await verifier.verifyAttestation(
                    truncated, keyID: device.keyID, clientData: clientData, policy: AppleTestAuthority.policy,
                    at: AppleTestAuthority.now)
                XCTFail("a truncation to \(length) bytes was accepted")
            } catch {
                XCTAssert(error is AttestationFailure, "length \(length): \(error)")
            }
        }
    }

    func testFlippedBytesAreRefusedUnlessInTheUncheckedReceipt() async throws {
        let authority = try AppleTestAuthority()
        let device = AppleTestAuthority.Device()
        let receipt = Array("unchecked-receipt".utf8)
        var knobs = AppleTestAuthority.Knobs()
        knobs.receipt = receipt
        let object = try authority.attestation(device: device, clientData: clientData, knobs: knobs)
        // The receipt is not verified (Apple's fraud-metric service reads it), so a flip inside it is accepted.
        let receiptStart = try XCTUnwrap(firstRange(of: receipt, in: object))
        let receiptRange = receiptStart..<(receiptStart + receipt.count)
        let verifier = AppleAppAttestVerifier(trustedRoots: [authority.root])
        var random = SplitMix64(seed: 0xC0FF_EE00)
        for _ in 0..<600 {
            var mutated = object
            let position = Int(random.next() % UInt64(object.count))
            mutated[position] ^= UInt8(truncatingIfNeeded: random.next() % 255 + 1)
            _ = try? AppleAttestationObject(bytes: mutated)
            if let parsed = try? AppleAttestationObject(bytes: mutated) {
                _ = try? AppleAuthenticatorData(bytes: parsed.authData)
            }
            do {
                _ = try await verifier.verifyAttestation(
                    mutated, keyID: device.keyID, clientData: clientData, policy: AppleTestAuthority.policy,
                    at: AppleTestAuthority.now)
                // Only the unchecked receipt, or an encoding that means the same certificates and
                // authenticator data, may be accepted: swift-asn1 reads a signature BIT STRING whose
                // unused-bits count went from 0 to 1 (over a zero low bit) as the same signature.
                let sameContent = try sameVerifiedContent(mutated, object)
                XCTAssert(receiptRange.contains(position) || sameContent, "a flip at \(position) was accepted")
            } catch {
                XCTAssert(error is AttestationFailure, "flip at \(position): \(error)")
            }
        }
    }

    func testFlippedAssertionBytesAreRefused() throws {
        let device = AppleTestAuthority.Device()
        let assertion = try AppleTestAuthority.assertion(device: device, clientData: clientData, counter: 5)
        let key = AttestedKey(keyID: device.keyID, publicKey: device.publicKey, counter: 0)
        let verifier = AppleAppAttestVerifier(trustedRoots: [])
        var random = SplitMix64(seed: 42)
        for length in 0..<assertion.count {
            XCTAssertThrowsError(try verifier.verifyAssertion(
                Array(assertion.prefix(length)), clientData: clientData, key: key, policy: AppleTestAuthority.policy))
        }
        for _ in 0..<600 {
            var mutated = assertion
            let position = Int(random.next() % UInt64(assertion.count))
            mutated[position] ^= UInt8(truncatingIfNeeded: random.next() % 255 + 1)
            XCTAssertThrowsError(try verifier.verifyAssertion(
                mutated, clientData: clientData, key: key, policy: AppleTestAuthority.policy)) {
                XCTAssert($0 is AttestationFailure, "flip at \(position): \($0)")
            }
        }
    }

    /// Whether two attestation objects carry the same authenticator data and certificates with the same
    /// signed bytes, signature algorithm and signature value.
    private func sameVerifiedContent(_ a: [UInt8], _ b: [UInt8]) throws -> Bool {
        let (x, y) = (try AppleAttestationObject(bytes: a), try AppleAttestationObject(bytes: b))
        guard x.fmt == y.fmt, x.authData == y.authData, x.x5c.count == y.x5c.count else { return false }
        return try zip(x.x5c, y.x5c).allSatisfy { pair in
            let (c, d) = (try Certificate(derEncoded: pair.0), try Certificate(derEncoded: pair.1))
            return c.tbsCertificateBytes == d.tbsCertificateBytes && c.signature == d.signature
                && c.signatureAlgorithm == d.signatureAlgorithm
        }
    }

    private func firstRange(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}
