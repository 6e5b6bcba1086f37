import BlockingTestSupport
import Foundation
import Testing
@testable import CofferFormat

@Suite("Damaged and tampered containers are refused", .ownThread)
struct TamperTests {
    @Test("every single flipped bit of a small container is refused")
    func everyBitFlip() throws {
        let sealed = try Fixtures.seal(Fixtures.bytes(300))
        var accepted: [Int] = []
        for bit in 0..<(sealed.count * 8) {
            var damaged = sealed
            damaged[bit / 8] ^= 1 << UInt8(bit % 8)
            if Fixtures.openError(damaged) == nil { accepted.append(bit) }
        }
        #expect(accepted.isEmpty, "bits accepted after flipping: \(accepted.prefix(10))")
    }

    @Test("flipped bits across a multi-chunk container are refused")
    func sampledBitFlips() throws {
        let sealed = try Fixtures.seal(Fixtures.bytes(3 * Fixtures.chunk + 999))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var damaged = sealed
            let byte = Int.random(in: 0..<sealed.count, using: &generator)
            damaged[byte] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
            #expect(Fixtures.openError(damaged) != nil, "flip at byte \(byte) accepted")
        }
    }

    @Test("truncation at every chunk boundary, inside chunks and inside the header is refused")
    func truncation() throws {
        let sealed = try Fixtures.seal(Fixtures.bytes(3 * Fixtures.chunk + 500))
        let header = try SealedModel.readHeader(from: BytesSource(sealed))
        var cuts = Array(0...header.encodedLength + 1)
        for index in 0..<header.chunkCount {
            let start = Int(header.sealedOffset(ofChunk: index))
            cuts += [start - 1, start, start + 1, start + 1000, start + Fixtures.chunk, start + Fixtures.chunk + 15]
        }
        cuts += [sealed.count - 16, sealed.count - 1]
        for cut in Set(cuts) where cut < sealed.count {
            let error = Fixtures.openError(Array(sealed.prefix(cut)))
            #expect(error != nil, "truncated to \(cut) bytes but accepted")
        }
    }

    @Test("appended bytes are refused", arguments: [1, 16, 17, Fixtures.chunk + 16])
    func appended(count: Int) throws {
        let sealed = try Fixtures.seal(Fixtures.bytes(2 * Fixtures.chunk))
        let error = Fixtures.openError(sealed + Fixtures.bytes(count, seed: 9))
        #expect(error as? ContainerError == .lengthMismatch(expected: UInt64(sealed.count), actual: UInt64(sealed.count + count)))
    }

    @Test("swapped chunks are refused")
    func swappedChunks() throws {
        let sealed = try Fixtures.seal(Fixtures.bytes(3 * Fixtures.chunk))
        let header = try SealedModel.readHeader(from: BytesSource(sealed))
        let a = Int(header.sealedOffset(ofChunk: 0)), b = Int(header.sealedOffset(ofChunk: 1))
        let size = Fixtures.chunk + 16
        var swapped = sealed
        swapped.replaceSubrange(a..<a + size, with: sealed[b..<b + size])
        swapped.replaceSubrange(b..<b + size, with: sealed[a..<a + size])
        #expect(Fixtures.openError(swapped) as? ContainerError == .authenticationFailure)
    }

    @Test("a header from another container with the same key is refused")
    func foreignHeader() throws {
        let first = try Fixtures.seal(Fixtures.bytes(2 * Fixtures.chunk, seed: 1))
        let second = try Fixtures.seal(Fixtures.bytes(2 * Fixtures.chunk, seed: 2))
        let length = try Fixtures.headerLength(first)
        let mixed = Array(second.prefix(length)) + Array(first.dropFirst(length))
        #expect(Fixtures.openError(mixed) as? ContainerError == .authenticationFailure)
    }

    @Test("a chunk from another container at the same index is refused")
    func foreignChunk() throws {
        let first = try Fixtures.seal(Fixtures.bytes(2 * Fixtures.chunk, seed: 1))
        let second = try Fixtures.seal(Fixtures.bytes(2 * Fixtures.chunk, seed: 1))
        let length = try Fixtures.headerLength(first)
        let mixed = Array(first.prefix(length + Fixtures.chunk + 16)) + Array(second.dropFirst(length + Fixtures.chunk + 16))
        #expect(Fixtures.openError(mixed) as? ContainerError == .authenticationFailure)
    }

    @Test("the wrong model key is refused, naming both key IDs")
    func wrongKey() throws {
        let sealed = try Fixtures.seal(Fixtures.bytes(500))
        let error = Fixtures.openError(sealed, key: .modelKey(Fixtures.otherKey))
        #expect(error as? ContainerError == .wrongKey(sealedWith: Fixtures.key.id, given: Fixtures.otherKey.id))
        #expect(!(error.map { "\($0)" } ?? "").contains("key: "))
    }

    @Test("a key with the same ID but other material is an authentication failure")
    func sameIDOtherMaterial() throws {
        let sealed = try Fixtures.seal(Fixtures.bytes(500))
        let impostor = try ModelKey(id: Fixtures.key.id, name: "x", created: Date(), key: .init(size: .bits256))
        #expect(Fixtures.openError(sealed, key: .modelKey(impostor)) as? ContainerError == .authenticationFailure)
    }

    @Test("the wrong passphrase is refused; a key where a passphrase is needed too")
    func wrongPassphrase() throws {
        let sealed = try Fixtures.seal(Fixtures.bytes(500), key: .passphrase(Array("right".utf8)))
        #expect(Fixtures.openError(sealed, key: .passphrase(Array("wrong".utf8))) as? ContainerError == .authenticationFailure)
        #expect(Fixtures.openError(sealed, key: .modelKey(Fixtures.key)) as? ContainerError == .wrongKeyKind(needs: "a passphrase, not a model key"))
    }

    @Test("an empty or non-Coffer input is refused")
    func notAContainer() throws {
        #expect(Fixtures.openError([]) as? ContainerError == .notAContainer)
        #expect(Fixtures.openError(Array("hello world, this is not sealed".utf8)) as? ContainerError == .notAContainer)
        #expect(Fixtures.openError(Array(ContainerHeader.magic.prefix(5))) as? ContainerError == .notAContainer)
        #expect(Fixtures.openError(ContainerHeader.magic + [0, 1]) as? ContainerError == .malformedHeader("header ends early"))
    }

    @Test("a 5 GiB plaintext length claim over a short file is refused without allocating it")
    func hugeClaim() throws {
        let sealed = try Fixtures.seal(Fixtures.bytes(100))
        var header = try SealedModel.readHeader(from: BytesSource(sealed))
        header.plaintextLength = 5 << 30
        let keys = try FileKeys(for: header, using: .modelKey(Fixtures.key))
        header.mac = keys.mac(of: header)  // a validly authenticated lie
        let forged = header.encoded() + Array(sealed.dropFirst(header.encodedLength))
        let error = Fixtures.openError(forged)
        #expect(error as? ContainerError == .lengthMismatch(expected: header.sealedLength, actual: UInt64(forged.count)))
    }

    @Test("a later format version is refused cleanly")
    func laterVersion() throws {
        var sealed = try Fixtures.seal(Fixtures.bytes(10))
        sealed[9] = 3
        #expect(Fixtures.openError(sealed) as? ContainerError == .unsupportedVersion(3))
    }
}
