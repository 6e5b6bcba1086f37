@testable import AttestationTestSupport
import CofferAttestation
import XCTest

/// The bounded CBOR reader: round trips of each kind, and refusals before allocation.
final class CBORReaderTests: XCTestCase {
    private func expectRefused(_ bytes: [UInt8], _ detail: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try CBORReader.read(bytes), file: file, line: line) { error in
            XCTAssertEqual(error as? AttestationFailure, .invalid(detail), file: file, line: line)
        }
    }

    func testEachKindRoundTrips() throws {
        let values: [CBORValue] = [
            .unsigned(0), .unsigned(23), .unsigned(24), .unsigned(255), .unsigned(256), .unsigned(65_536),
            .unsigned(UInt64(UInt32.max) + 1), .unsigned(.max),
            .negative(0), .negative(99), .negative(.max),
            .bytes([]), .bytes(Array(0...255)), .bytes(Array(repeating: 1, count: 70_000)),
            .text(""), .text("apple-appattest"), .text("é ✓ 𝄞"),
            .array([]), .array([.unsigned(1), .text("a"), .array([.bytes([2])])]),
            .map([]),
            .map([
                CBORMapEntry(key: .text("fmt"), value: .text("x")),
                CBORMapEntry(key: .negative(1), value: .bytes([1])),
                CBORMapEntry(key: .unsigned(1), value: .map([CBORMapEntry(key: .bytes([0]), value: .array([]))])),
            ]),
        ]
        for value in values {
            XCTAssertEqual(try CBORReader.read(CBORWriter.encode(value)), value)
        }
    }

    func testKnownEncodingsDecode() throws {
        // RFC 8949 Appendix A examples.
        XCTAssertEqual(try CBORReader.read([0x19, 0x03, 0xE8]), .unsigned(1000))
        XCTAssertEqual(try CBORReader.read([0x38, 0x63]), .negative(99))
        XCTAssertEqual(try CBORReader.read([0x64, 0x49, 0x45, 0x54, 0x46]), .text("IETF"))
        XCTAssertEqual(try CBORReader.read([0x82, 0x01, 0x82, 0x02, 0x03]), .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)])]))
    }

    func testLongerThanNeededHeadsAreAccepted() throws {
        // A documented leniency: the evidence is not signed as CBOR.
        XCTAssertEqual(try CBORReader.read([0x18, 0x01]), .unsigned(1))
        XCTAssertEqual(try CBORReader.read([0x59, 0x00, 0x01, 0xAA]), .bytes([0xAA]))
    }

    func testHugeDeclaredLengthsAreRefusedBeforeAllocating() {
        // A byte string, text string, array and map each claiming 2^63 (and 2^64 - 1) items in a few bytes.
        for max in [UInt64(1) << 63, .max] {
            expectRefused(CBORWriter.head(2, max), "CBOR length exceeds the input")
            expectRefused(CBORWriter.head(3, max) + [0x61], "CBOR length exceeds the input")
            expectRefused(CBORWriter.head(4, max) + [0x01], "CBOR array count exceeds the input")
            expectRefused(CBORWriter.head(5, max) + [0x01, 0x01], "CBOR map count exceeds the input")
        }
        expectRefused([0x5A, 0xFF, 0xFF, 0xFF, 0xFF], "CBOR length exceeds the input")
        expectRefused([0x43, 0x01, 0x02], "CBOR length exceeds the input")
        expectRefused([0x83, 0x01, 0x02], "CBOR array count exceeds the input")
        expectRefused([0x82, 0x81, 0x01], "CBOR input ends early")
        expectRefused([0xA2, 0x01, 0x02, 0x03], "CBOR map count exceeds the input")
    }

    func testNestingDepthIsBounded() throws {
        func nested(_ depth: Int) -> [UInt8] { Array(repeating: 0x81, count: depth - 1) + [0x80] }
        XCTAssertNoThrow(try CBORReader.read(nested(CBORReader.maximumDepth)))
        expectRefused(nested(CBORReader.maximumDepth + 1), "CBOR nesting is deeper than 16")
        expectRefused(Array(repeating: 0x81, count: 100_000) + [0x80], "CBOR nesting is deeper than 16")
        // Maps count too.
        let maps: [UInt8] = Array([[UInt8]](repeating: [0xA1, 0x01], count: CBORReader.maximumDepth).joined()) + [0x01]
        expectRefused(maps, "CBOR nesting is deeper than 16")
    }

    func testIndefiniteLengthsAreRefused() {
        expectRefused([0x5F, 0x41, 0x01, 0xFF], "CBOR indefinite lengths are not accepted")
        expectRefused([0x9F, 0xFF], "CBOR indefinite lengths are not accepted")
        expectRefused([0xBF, 0xFF], "CBOR indefinite lengths are not accepted")
    }

    func testTagsFloatsSimpleValuesAndReservedHeadsAreRefused() {
        expectRefused([0xC2, 0x41, 0x01], "CBOR tags are not accepted")
        expectRefused([0xF5], "CBOR floats and simple values are not accepted")
        expectRefused([0xFB, 0, 0, 0, 0, 0, 0, 0, 0], "CBOR floats and simple values are not accepted")
        expectRefused([0x1C], "CBOR head uses reserved additional information")
        expectRefused([0x1B, 0x00], "CBOR length exceeds the input")
    }

    func testDuplicateAndCompoundMapKeysAreRefused() {
        expectRefused([0xA2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02], "CBOR map has a duplicate key")
        expectRefused([0xA1, 0x80, 0x01], "CBOR map key is an array or a map")
    }

    func testTrailingBytesEmptyInputAndBadUTF8AreRefused() {
        expectRefused([0x01, 0x02], "CBOR item is followed by extra bytes")
        expectRefused([], "CBOR input ends early")
        expectRefused([0x62, 0xC3, 0x28], "CBOR text string is not UTF-8")
    }
}
