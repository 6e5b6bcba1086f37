@testable import AttestationTestSupport
import CofferAttestation
import SwiftASN1
import XCTest

final class AndroidKeyDescriptionTests: XCTestCase {
    let challenge = [UInt8](repeating: 0xAB, count: 32)

    var valid: [UInt8] {
        get throws { try AndroidTestKeyDescription(challenge: challenge).derEncoded() }
    }

    func testValidDescriptionParses() throws {
        var spec = AndroidTestKeyDescription(challenge: challenge)
        spec.attestationVersion = 400
        spec.keyMintVersion = 400
        spec.keyMintSecurityLevel = 2
        spec.attestationSecurityLevel = 2
        spec.uniqueID = [9, 9]
        spec.packages = [("com.example.coffer", 42), ("com.example.shared", 7)]
        let parsed = try AndroidKeyDescription(derEncoded: try spec.derEncoded())
        XCTAssertEqual(parsed.attestationVersion, 400)
        XCTAssertEqual(parsed.keyMintVersion, 400)
        XCTAssertEqual(parsed.attestationSecurityLevel, .strongBox)
        XCTAssertEqual(parsed.keyMintSecurityLevel, .strongBox)
        XCTAssertEqual(parsed.attestationChallenge, challenge)
        XCTAssertEqual(parsed.uniqueID, [9, 9])
        XCTAssertNil(parsed.hardwareEnforcedApplicationID)
        XCTAssertEqual(
            parsed.softwareEnforcedApplicationID,
            AndroidAttestationApplicationID(
                packages: [.init(name: "com.example.coffer", version: 42), .init(name: "com.example.shared", version: 7)],
                signatureDigests: [AndroidTestKeyDescription.signingDigest]
            )
        )
    }

    func testEveryKnownVersionParses() throws {
        for version in [3, 4, 100, 200, 300, 400] {
            var spec = AndroidTestKeyDescription(challenge: challenge)
            spec.attestationVersion = version
            spec.keyMintVersion = version
            XCTAssertEqual(try AndroidKeyDescription(derEncoded: try spec.derEncoded()).attestationVersion, version)
        }
    }

    func testUnknownTaggedFieldsAreSkippedAndListsMayBeEmpty() throws {
        var spec = AndroidTestKeyDescription(challenge: challenge)
        spec.includeOtherFields = false
        XCTAssertNotNil(try AndroidKeyDescription(derEncoded: try spec.derEncoded()).attestationApplicationID)
        spec.placement = .none
        XCTAssertNil(try AndroidKeyDescription(derEncoded: try spec.derEncoded()).attestationApplicationID)
    }

    func testRootOfTrustAndOriginAreReadFromTheHardwareList() throws {
        var spec = AndroidTestKeyDescription(challenge: challenge)
        spec.deviceLocked = false
        spec.verifiedBootState = 2
        spec.origin = 2
        let parsed = try AndroidKeyDescription(derEncoded: try spec.derEncoded())
        XCTAssertEqual(parsed.rootOfTrust, AndroidRootOfTrust(deviceLocked: false, verifiedBootState: .unverified))
        XCTAssertEqual(parsed.origin, 2)
        spec.includeRootOfTrust = false
        spec.origin = nil
        let bare = try AndroidKeyDescription(derEncoded: try spec.derEncoded())
        XCTAssertNil(bare.rootOfTrust)
        XCTAssertNil(bare.origin)
        spec.includeRootOfTrust = true
        spec.verifiedBootState = 4
        assertAndroidFailureSync(.invalid, "verifiedBootState is not 0 to 3") { _ = try AndroidKeyDescription(derEncoded: try spec.derEncoded()) }
    }

    /// A KeyDescription written field by field (version 300, TEE), its two authorization lists
    /// holding what `software` and `hardware` write.
    func handMade(software: (inout DER.Serializer) throws -> Void = { _ in },
                  hardware: (inout DER.Serializer) throws -> Void = { _ in }) throws -> [UInt8] {
        var s = DER.Serializer()
        try s.appendConstructedNode(identifier: .sequence) { s in
            try s.serialize(300)
            try 1.serialize(into: &s, withIdentifier: .enumerated)
            try s.serialize(300)
            try 1.serialize(into: &s, withIdentifier: .enumerated)
            try s.serialize(ASN1OctetString(contentBytes: ArraySlice(challenge)))
            try s.serialize(ASN1OctetString(contentBytes: []))
            try s.appendConstructedNode(identifier: .sequence) { s in try software(&s) }
            try s.appendConstructedNode(identifier: .sequence) { s in try hardware(&s) }
        }
        return s.serializedBytes
    }

    func testMalformedOrRepeatedRootOfTrustIsRefused() throws {
        func root(_ s: inout DER.Serializer, _ elements: (inout DER.Serializer) throws -> Void) throws {
            try s.serialize(explicitlyTaggedWithTagNumber: 704, tagClass: .contextSpecific) { s in
                try s.appendConstructedNode(identifier: .sequence) { s in try elements(&s) }
            }
        }
        let key = ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 7, count: 32)))
        let cases: [(String, (inout DER.Serializer) throws -> Void)] = [
            ("rootOfTrust has 2 elements", { s in try root(&s) { s in try s.serialize(key); try s.serialize(true) } }),
            ("rootOfTrust has 5 elements", { s in
                try root(&s) { s in
                    try s.serialize(key); try s.serialize(true); try 0.serialize(into: &s, withIdentifier: .enumerated)
                    try s.serialize(key); try s.serialize(key)
                }
            }),
            ("deviceLocked is not valid DER", { s in
                try root(&s) { s in try s.serialize(key); try s.serialize(1); try 0.serialize(into: &s, withIdentifier: .enumerated) }
            }),
            ("field [704] twice", { s in
                for _ in 0..<2 {
                    try root(&s) { s in try s.serialize(key); try s.serialize(true); try 0.serialize(into: &s, withIdentifier: .enumerated) }
                }
            }),
            ("origin is negative", { s in try s.serialize(-1, explicitlyTaggedWithTagNumber: 702, tagClass: .contextSpecific) }),
        ]
        for (fragment, fields) in cases {
            let bytes = try handMade(hardware: fields)
            assertAndroidFailureSync(.invalid, fragment) { _ = try AndroidKeyDescription(derEncoded: bytes) }
        }
    }

    func testUnknownSecurityLevelIsRefused() throws {
        var spec = AndroidTestKeyDescription(challenge: challenge)
        spec.attestationSecurityLevel = 3
        assertAndroidFailureSync(.invalid, "attestationSecurityLevel is not software, tee or strongbox") {
            _ = try AndroidKeyDescription(derEncoded: try spec.derEncoded())
        }
    }

    func testNegativeVersionIsRefused() throws {
        var spec = AndroidTestKeyDescription(challenge: challenge)
        spec.attestationVersion = -1
        assertAndroidFailureSync(.invalid, "attestationVersion is negative") { _ = try AndroidKeyDescription(derEncoded: try spec.derEncoded()) }
    }

    func testLongChallengeIsRefused() throws {
        let spec = AndroidTestKeyDescription(challenge: [UInt8](repeating: 1, count: 129))
        assertAndroidFailureSync(.invalid, "longer than 128 bytes") { _ = try AndroidKeyDescription(derEncoded: try spec.derEncoded()) }
    }

    func testDuplicatedApplicationIDIsRefused() throws {
        // A software list with two [709] fields.
        let spec = AndroidTestKeyDescription(challenge: challenge)
        var applicationField = DER.Serializer()
        try applicationField.serialize(
            ASN1OctetString(contentBytes: ArraySlice(try spec.applicationIDDER())), explicitlyTaggedWithTagNumber: 709, tagClass: .contextSpecific
        )
        let bytes = try handMade(software: { s in
            s.serializeRawBytes(applicationField.serializedBytes)
            s.serializeRawBytes(applicationField.serializedBytes)
        })
        assertAndroidFailureSync(.invalid, "softwareEnforced has field [709] twice") {
            _ = try AndroidKeyDescription(derEncoded: bytes)
        }
    }

    func testTrailingElementIsRefused() throws {
        var bytes = try valid
        // Append an INTEGER inside the outer SEQUENCE: re-wrap the contents with one more element.
        let root = try DER.parse(bytes)
        guard case .constructed(let children) = root.content else { return XCTFail("not constructed") }
        var s = DER.Serializer()
        try s.appendConstructedNode(identifier: .sequence) { s in
            for child in children { s.serialize(child) }
            try s.serialize(1)
        }
        bytes = s.serializedBytes
        assertAndroidFailureSync(.invalid, "elements after hardwareEnforced") { _ = try AndroidKeyDescription(derEncoded: bytes) }
    }

    func testHugeDeclaredLengthIsRefused() {
        // SEQUENCE claiming 4 GiB - 1 bytes of content, followed by a few.
        let bytes: [UInt8] = [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0x01, 0x03]
        assertAndroidFailureSync(.invalid, "the extension is not valid DER") { _ = try AndroidKeyDescription(derEncoded: bytes) }
        let eightByteLength: [UInt8] = [0x30, 0x88, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0x01, 0x03]
        assertAndroidFailureSync(.invalid, "the extension is not valid DER") { _ = try AndroidKeyDescription(derEncoded: eightByteLength) }
    }

    func testOversizedInputIsRefusedBeforeParsing() {
        let bytes = [UInt8](repeating: 0x30, count: 64 * 1024 + 1)
        assertAndroidFailureSync(.invalid, "larger than 65536 bytes") { _ = try AndroidKeyDescription(derEncoded: bytes) }
    }

    func testDeeplyNestedInputIsRefused() {
        var bytes: [UInt8] = [0x05, 0x00]
        for _ in 0..<200 {
            bytes = [0x30, 0x82, UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
        }
        assertAndroidFailureSync(.invalid, "not valid DER") { _ = try AndroidKeyDescription(derEncoded: bytes) }
    }

    func testEveryTruncationIsRefused() throws {
        assertEveryTruncationIsRefused(try valid)
    }

    func testByteFlipsParseOrFailCleanly() throws {
        assertByteFlipsParseOrFailCleanly(try valid, seed: 0x00C0_FFEE)
    }
}

/// Every proper prefix of a valid KeyDescription is refused with one ``AttestationFailure`` line.
func assertEveryTruncationIsRefused(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
    for length in 0..<bytes.count {
        do {
            _ = try AndroidKeyDescription(derEncoded: Array(bytes.prefix(length)))
            XCTFail("a \(length)-byte prefix parsed", file: file, line: line)
        } catch let failure as AttestationFailure {
            XCTAssertEqual(failure.code, .invalid, file: file, line: line)
            XCTAssertFalse(failure.detail.contains("\n"), file: file, line: line)
        } catch {
            XCTFail("prefix \(length): \(error)", file: file, line: line)
        }
    }
}

/// 4000 copies of `bytes` with one to three bytes flipped (a seeded PRNG, so failures replay)
/// each parse or throw one ``AttestationFailure`` line; none traps or throws anything else.
func assertByteFlipsParseOrFailCleanly(_ bytes: [UInt8], seed: UInt64, file: StaticString = #filePath, line: UInt = #line) {
    var random = SplitMix64(seed: seed)
    var refused = 0
    for iteration in 0..<4000 {
        var mutated = bytes
        for _ in 0..<(1 + Int(random.next() % 3)) {
            let position = Int(random.next() % UInt64(mutated.count))
            mutated[position] ^= UInt8(truncatingIfNeeded: random.next() | 1)
        }
        do {
            _ = try AndroidKeyDescription(derEncoded: mutated)
        } catch let failure as AttestationFailure {
            XCTAssertEqual(failure.code, .invalid, file: file, line: line)
            XCTAssertFalse(failure.detail.contains("\n"), file: file, line: line)
            refused += 1
        } catch {
            XCTFail("mutation \(iteration) threw \(error)", file: file, line: line)
        }
    }
    XCTAssertGreaterThan(refused, 0, file: file, line: line)
}
