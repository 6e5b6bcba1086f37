import Foundation
import Testing
@testable import CofferFormat

@Suite("Header encoding and parsing")
struct HeaderTests {
    static func sample(_ derivation: ContainerHeader.KeyDerivation = .modelKey(id: "abc123"), name: String = "Flower.mlmodelc") -> ContainerHeader {
        ContainerHeader(chunkSizeExponent: 20, payloadKind: .directory, keyDerivation: derivation,
                        plaintextLength: 123_456_789, salt: Array(repeating: 7, count: 32), originalName: name)
    }

    @Test("encoding then parsing gives the same header", arguments: [
        sample(), sample(name: ""), sample(name: "Blumen-Klassifikator-ü.mlpackage"),
        sample(.passphrase(ScryptParameters(logN: 17, r: 8, p: 1, salt: Array(repeating: 3, count: 16)))),
    ])
    func roundTrip(header: ContainerHeader) throws {
        let bytes = header.encoded()
        #expect(bytes.count == header.encodedLength)
        #expect(try ContainerHeader.preamble(from: bytes)?.headerLength == bytes.count)
        #expect(try ContainerHeader(parsing: bytes) == header)
    }

    @Test("the layout matches docs/FORMAT.md field by field")
    func layout() {
        let bytes = Self.sample().encoded()
        #expect(Array(bytes[0..<8]) == [0x89, 0x43, 0x4F, 0x46, 0x46, 0x45, 0x52, 0x0A])
        #expect(Array(bytes[8..<10]) == [0, 1])
        #expect(Int(bytes[10]) << 8 | Int(bytes[11]) == bytes.count)
        #expect(Array(bytes[12..<16]) == [1, 20, 2, 1])
        #expect(Array(bytes[16..<24]) == [0, 0, 0, 0, 0x07, 0x5B, 0xCD, 0x15])
        #expect(bytes[56] == 6)
        #expect(Array(bytes[57..<63]) == Array("abc123".utf8))
        #expect(Array(bytes[63..<65]) == [0, 15])
        #expect(bytes.count == 65 + 15 + 32)
    }

    @Test("every truncation and every single-byte change of a header parses or fails cleanly")
    func mutations() {
        let bytes = Self.sample(.passphrase(ScryptParameters(logN: 17, r: 8, p: 1, salt: Array(repeating: 3, count: 16)))).encoded()
        for cut in 0..<bytes.count {
            #expect(throws: ContainerError.self) { try ContainerHeader(parsing: Array(bytes.prefix(cut))) }
        }
        for index in bytes.indices {
            for value: UInt8 in [0, 1, 0x7F, 0x80, 0xFF, bytes[index] ^ 1] {
                var mutated = bytes
                mutated[index] = value
                _ = try? ContainerHeader(parsing: mutated)
            }
        }
    }

    @Test("rules that need no key are enforced", arguments: [
        (13, UInt8(15), "chunk size 2^15 not in 2^16...2^20"),
        (13, UInt8(21), "chunk size 2^21 not in 2^16...2^20"),
        (12, UInt8(2), "unknown cipher suite"),
        (14, UInt8(3), "unknown payload kind"),
        (15, UInt8(9), "unknown key derivation 9"),
        (57, UInt8(ascii: "/"), "key ID has characters outside A-Z a-z 0-9 . _ -"),
        (65, UInt8(ascii: "/"), "original name is not a plain file name"),
        (65, UInt8(0xC3), "original name is not valid UTF-8"),
    ])
    func rules(offset: Int, value: UInt8, reason: String) {
        var bytes = Self.sample().encoded()
        bytes[offset] = value
        #expect(throws: ContainerError.malformedHeader(reason)) { try ContainerHeader(parsing: bytes) }
    }

    @Test("oversized header lengths are refused before reading on")
    func headerLengthBounds() {
        var bytes = Self.sample().encoded()
        bytes[10] = 0x13; bytes[11] = 0x88  // 5000
        #expect(throws: ContainerError.malformedHeader("header length 5000 out of range")) {
            try ContainerHeader.preamble(from: bytes)
        }
    }

    @Test("scrypt parameters beyond the reader's limits are refused before deriving", arguments: [
        ScryptParameters(logN: 21, r: 8, p: 1, salt: []), ScryptParameters(logN: 9, r: 8, p: 1, salt: []),
        ScryptParameters(logN: 18, r: 16, p: 1, salt: []), ScryptParameters(logN: 14, r: 8, p: 5, salt: []),
        ScryptParameters(logN: 14, r: 33, p: 1, salt: []),
    ])
    func scryptLimits(parameters: ScryptParameters) {
        #expect(throws: ContainerError.self) { try parameters.checkLimits() }
    }

    @Test("the standard scrypt parameters are within the limits")
    func standardScrypt() throws {
        try ScryptParameters.standard(salt: []).checkLimits()
    }
}
