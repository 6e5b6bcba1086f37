import Foundation
import Testing
@testable import CofferFormat

@Suite("Random access")
struct ReaderTests {
    @Test("any byte range reads back exactly")
    func ranges() throws {
        let plaintext = Fixtures.bytes(4 * Fixtures.chunk + 123)
        let reader = try SealedModel.Reader(bytes: try Fixtures.seal(plaintext), using: .modelKey(Fixtures.key))
        let length = UInt64(plaintext.count)
        var generator = SystemRandomNumberGenerator()
        var ranges: [Range<UInt64>] = [0..<0, 0..<1, 0..<length, length - 1..<length]
        let boundary = UInt64(Fixtures.chunk)
        ranges += [boundary - 1..<boundary + 1, boundary..<2 * boundary, 3 * boundary + 5..<length]
        for _ in 0..<100 {
            let a = UInt64.random(in: 0...length, using: &generator), b = UInt64.random(in: 0...length, using: &generator)
            ranges.append(min(a, b)..<max(a, b))
        }
        for range in ranges {
            #expect(try reader.read(range: range) == Array(plaintext[Int(range.lowerBound)..<Int(range.upperBound)]))
        }
        #expect(throws: ContainerError.self) { try reader.read(range: 0..<length + 1) }
    }

    @Test("a reader refuses a damaged last chunk when it opens, before any read")
    func lastChunkCheckedFirst() throws {
        var sealed = try Fixtures.seal(Fixtures.bytes(2 * Fixtures.chunk + 10))
        sealed[sealed.count - 20] ^= 1
        #expect(throws: ContainerError.authenticationFailure) {
            _ = try SealedModel.Reader(bytes: sealed, using: .modelKey(Fixtures.key))
        }
    }

    @Test("reads that touch a damaged middle chunk fail; others still succeed")
    func damagedMiddle() throws {
        var sealed = try Fixtures.seal(Fixtures.bytes(3 * Fixtures.chunk))
        let header = try SealedModel.readHeader(from: BytesSource(sealed))
        sealed[Int(header.sealedOffset(ofChunk: 1)) + 7] ^= 0x80
        let reader = try SealedModel.Reader(bytes: sealed, using: .modelKey(Fixtures.key))
        #expect(try reader.read(range: 0..<100).count == 100)
        #expect(throws: ContainerError.authenticationFailure) {
            _ = try reader.read(range: UInt64(Fixtures.chunk)..<UInt64(Fixtures.chunk) + 1)
        }
        #expect(throws: ContainerError.authenticationFailure) { try reader.verifyAll() }
    }
}
