import BlockingTestSupport
import Crypto
import Foundation
import Testing
@testable import CofferFormat

/// Format version 2: content-defined chunks sealed deterministically under the model key, listed
/// in an authenticated chunk table (docs/FORMAT.md, "Version 2").
@Suite("Version 2: content-defined chunks, deterministic sealing", .ownThread)
struct DeterministicSealingTests {
    static let key = KeyMaterial.modelKey(Fixtures.key)
    static let otherKey = KeyMaterial.modelKey(Fixtures.otherKey)
    static let gear = ContentChunker.gear(inputKeyMaterial: Fixtures.key.key)

    /// Pseudo-random bytes (a hash chain), so content-defined boundaries fall as in real models.
    /// Each block is hashed in place: copying every digest through `Array` cost this debug build
    /// seconds of the cooperative pool every test shares.
    static func noise(_ count: Int, seed: UInt8) -> [UInt8] {
        let blocks = (count + 31) / 32
        var out = [UInt8](repeating: 0, count: blocks * 32)
        out.withUnsafeMutableBytes { raw in
            var digest = SHA256.hash(data: [seed])
            var offset = 0
            while offset < raw.count {
                digest.withUnsafeBytes { raw.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: 32) }
                digest = SHA256.hash(data: UnsafeRawBufferPointer(rebasing: raw[offset..<offset + 32]))
                offset += 32
            }
        }
        out.removeLast(out.count - count)
        return out
    }

    static func seal(_ plaintext: [UInt8], _ key: KeyMaterial = key) throws -> [UInt8] {
        var options = SealedModel.Options()
        options.passphraseLogN = 10
        #expect(options.formatVersion == 2)
        return try SealedModel.seal(plaintext, name: "model.bin", using: key, options: options)
    }

    static func header(_ sealed: [UInt8]) throws -> ContainerHeader {
        try ContainerHeader(parsing: Array(sealed.prefix(try Fixtures.headerLength(sealed))))
    }

    /// The sealed bytes of each chunk, by ID.
    static func sealedChunks(_ sealed: [UInt8]) throws -> [ChunkID: [UInt8]] {
        let header = try header(sealed)
        let layout = header.layout
        var chunks: [ChunkID: [UInt8]] = [:]
        for (index, entry) in try #require(header.chunkTable).entries.enumerated() {
            let start = Int(layout.sealedOffset(ofChunk: UInt64(index)))
            chunks[entry.id] = Array(sealed[start..<start + Int(entry.length) + 16])
        }
        return chunks
    }

    @Test("round trips of every size class open to the same bytes", arguments: [0, 1, 100, 65_535, 65_536, 65_537, 300_000, 3 << 20])
    func roundTrip(size: Int) throws {
        let plaintext = Self.noise(size, seed: 1)
        let sealed = try Self.seal(plaintext)
        let header = try Self.header(sealed)
        #expect(header.version == 2)
        #expect(UInt64(sealed.count) == header.sealedLength)
        #expect(try SealedModel.open(sealed, using: Self.key) == plaintext)
        let reader = try SealedModel.Reader(bytes: sealed, using: Self.key)
        if size > 10 { #expect(try reader.read(range: 3..<UInt64(size - 2)) == Array(plaintext[3..<size - 2])) }
    }

    @Test("chunks respect the minimum, average and maximum sizes on random data")
    func chunkSizes() throws {
        let lengths = try ContentChunker.lengths(of: BytesSource(Self.noise(24 << 20, seed: 2)), gear: Self.gear)
        #expect(lengths.reduce(0) { $0 + Int($1) } == 24 << 20)
        for length in lengths.dropLast() {
            #expect((ContentChunker.minimumLength...ContentChunker.maximumLength).contains(Int(length)))
        }
        let average = (24 << 20) / lengths.count
        #expect(average > 3 * ContentChunker.averageLength / 4 && average < 2 * ContentChunker.averageLength, "average \(average)")
        // Not every chunk is cut at the maximum: the content decides.
        #expect(lengths.filter { Int($0) == ContentChunker.maximumLength }.count < lengths.count / 4)
    }

    @Test("equal chunks seal to equal bytes under one key, and to other bytes under another")
    func equalChunksSealAlike() throws {
        let base = Self.noise(8 << 20, seed: 3)
        var edited = base
        // An insertion near the start shifts every later byte: content-defined boundaries resync.
        edited.insert(contentsOf: Array("a header that grew".utf8), at: 1000)
        edited.replaceSubrange(5_000_000..<5_000_100, with: [UInt8](repeating: 7, count: 100))
        let first = try Self.sealedChunks(try Self.seal(base))
        let second = try Self.sealedChunks(try Self.seal(edited))
        let shared = Set(first.keys).intersection(second.keys)
        #expect(shared.count >= first.count - 4, "shared \(shared.count) of \(first.count)")
        for id in shared { #expect(first[id] == second[id]) }
        let foreign = try Self.sealedChunks(try Self.seal(base, Self.otherKey))
        #expect(Set(foreign.keys).isDisjoint(with: first.keys))
        let firstBytes = Set(first.values)
        #expect(foreign.values.allSatisfy { !firstBytes.contains($0) })
    }

    @Test("the cut is keyed: another key cuts the same plaintext elsewhere")
    func keyedCut() throws {
        let plaintext = BytesSource(Self.noise(4 << 20, seed: 8))
        let mine = try ContentChunker.lengths(of: plaintext, gear: Self.gear)
        let theirs = try ContentChunker.lengths(of: plaintext, gear: ContentChunker.gear(inputKeyMaterial: Fixtures.otherKey.key))
        #expect(mine != theirs)
        #expect(try ContentChunker.lengths(of: plaintext, gear: Self.gear) == mine)
    }

    @Test("two containers of the same plaintext differ only in salt and MAC")
    func headerSaltIsFresh() throws {
        let plaintext = Self.noise(500_000, seed: 4)
        let a = try Self.seal(plaintext), b = try Self.seal(plaintext)
        let (ha, hb) = (try Self.header(a), try Self.header(b))
        #expect(ha.salt != hb.salt && ha.mac != hb.mac)
        #expect(ha.chunkTable == hb.chunkTable)
        #expect(a.dropFirst(ha.encodedLength) == b.dropFirst(hb.encodedLength))
    }

    @Test("a packed folder starts a chunk at every entry, so a changed file leaves the others' chunks alone")
    func folderBoundaries() throws {
        let root = Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        for (index, size) in [300_000, 5, 700_000, 90_000].enumerated() {
            try Data(Self.noise(size, seed: UInt8(10 + index))).write(to: root.appendingPathComponent("f\(index)"))
        }
        let tree = try PackedTree(root: root.path)
        let lengths = try ContentChunker.lengths(of: tree, segmentStarts: tree.segmentStarts, gear: Self.gear)
        var ends: Set<UInt64> = [0]
        var position: UInt64 = 0
        for length in lengths { position += UInt64(length); ends.insert(position) }
        for start in tree.segmentStarts { #expect(ends.contains(start), "no boundary at entry start \(start)") }
        #expect(tree.segmentStarts.first == 14)

        let before = try Self.sealedChunks(try Self.sealFolder(root))
        try Data(Self.noise(5, seed: 99)).write(to: root.appendingPathComponent("f1"))
        let after = try Self.sealedChunks(try Self.sealFolder(root))
        // Only the changed entry's chunk is new (its header and 5 bytes make one chunk).
        #expect(Set(after.keys).subtracting(before.keys).count == 1)
    }

    static func sealFolder(_ root: URL) throws -> [UInt8] {
        let output = Fixtures.temporaryFolder().appendingPathComponent("sealed.coffer")
        defer { try? FileManager.default.removeItem(at: output.deletingLastPathComponent()) }
        try SealedModel.seal(contentsOf: root.path, to: output.path, using: Self.key)
        return Array(try Data(contentsOf: output))
    }

    @Test("truncation, extension, reordering, swapping, dropping and foreign chunks are refused")
    func tampering() throws {
        let plaintext = Self.noise(2 << 20, seed: 5)
        let sealed = try Self.seal(plaintext)
        let header = try Self.header(sealed)
        let table = try #require(header.chunkTable)
        #expect(table.count >= 4)
        let layout = header.layout
        func chunk(_ index: Int) -> Range<Int> {
            let start = Int(layout.sealedOffset(ofChunk: UInt64(index)))
            return start..<start + Int(table.entries[index].length) + 16
        }
        // Truncated anywhere, or extended.
        #expect(Fixtures.openError(Array(sealed.prefix(10)), key: Self.key) as? ContainerError == .malformedHeader("header ends early"))
        for cut in [1, 16, 17, chunk(1).count, sealed.count - header.encodedLength, sealed.count - header.encodedLength + 40] {
            let error = Fixtures.openError(Array(sealed.dropLast(cut)), key: Self.key) as? ContainerError
            guard case .lengthMismatch = error else { Issue.record("cut \(cut): \(String(describing: error))"); continue }
        }
        guard case .lengthMismatch = Fixtures.openError(sealed + [0], key: Self.key) as? ContainerError else {
            Issue.record("extension accepted"); return
        }
        // Two chunks swapped (same length, so the layout holds), a chunk repeated in another's place.
        let equalLength = (0..<table.count - 1).first { table.entries[$0].length == table.entries[$0 + 1].length }
        var repeated = sealed
        let (a, b) = (chunk(0), chunk(1))
        let n = min(a.count, b.count)
        repeated.replaceSubrange(b.lowerBound..<b.lowerBound + n, with: sealed[a.lowerBound..<a.lowerBound + n])
        #expect(Fixtures.openError(repeated, key: Self.key) as? ContainerError == .authenticationFailure)
        if let i = equalLength {
            var swapped = sealed
            swapped.replaceSubrange(chunk(i), with: sealed[chunk(i + 1)])
            swapped.replaceSubrange(chunk(i + 1), with: sealed[chunk(i)])
            #expect(Fixtures.openError(swapped, key: Self.key) as? ContainerError == .authenticationFailure)
        }
        // Any changed byte of the table, and any changed byte of a chunk.
        for offset in [header.encodedLength - 32 - 36 * table.count, header.encodedLength - 40, header.encodedLength - 33] {
            var changed = sealed
            changed[offset] ^= 1
            let error = Fixtures.openError(changed, key: Self.key)
            #expect(error != nil, "table byte \(offset) changed and accepted")
        }
        var flipped = sealed
        flipped[chunk(2).lowerBound + 5] ^= 0x80
        #expect(Fixtures.openError(flipped, key: Self.key) as? ContainerError == .authenticationFailure)
        // A table re-authenticated by someone without the key cannot be: the MAC needs the key.
        // A chunk from another container under another key is refused.
        let foreign = try Self.seal(plaintext, Self.otherKey)
        var mixed = sealed
        let foreignHeader = try Self.header(foreign)
        let start = Int(foreignHeader.layout.sealedOffset(ofChunk: 1))
        mixed.replaceSubrange(chunk(1), with: foreign[start..<start + chunk(1).count])
        #expect(Fixtures.openError(mixed, key: Self.key) as? ContainerError == .authenticationFailure)
        // The wrong key fails at the header MAC, naming both IDs.
        #expect(Fixtures.openError(sealed, key: Self.otherKey) as? ContainerError
                == .wrongKey(sealedWith: Fixtures.key.id, given: Fixtures.otherKey.id))
    }

    @Test("a chunk table claiming more chunks than the file holds is refused before it is read")
    func hugeTableClaim() throws {
        var sealed = try Self.seal(Self.noise(1000, seed: 6))
        // Plaintext length 2^40 and 2^32 − 1 chunks: the table alone would be 150 GB.
        sealed.replaceSubrange(16..<24, with: [0, 0, 1, 0, 0, 0, 0, 0])
        sealed.replaceSubrange(56..<60, with: [0xFF, 0xFF, 0xFF, 0xFF])
        let error = Fixtures.openError(sealed, key: Self.key) as? ContainerError
        guard case .lengthMismatch(let expected, _) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(expected > 1 << 40)
        let preamble = try #require(try ContainerHeader.preamble(from: sealed))
        #expect(preamble.sealedLength == expected)
    }

    @Test("a sparse file as long as a huge table claims is refused at its first empty entry, before the table is read")
    func sparseTableClaim() throws {
        var sealed = try Self.seal(Self.noise(1000, seed: 7))
        // Plaintext length and chunk count 2^32 − 1: a 154 GB table, a 227 GB container, which a
        // sparse file is at no cost; its holes read as zeros, entries of empty chunks.
        sealed.replaceSubrange(16..<24, with: [0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF])
        sealed.replaceSubrange(56..<60, with: [0xFF, 0xFF, 0xFF, 0xFF])
        let preamble = try #require(try ContainerHeader.preamble(from: sealed))
        #expect(preamble.headerLength > 150_000_000_000)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sparse-\(UUID()).coffer").path
        defer { unlink(path) }
        // The fields and the one real entry (a 1000-byte chunk), then nothing but the claimed length.
        let written = preamble.chunkTableOffset + ChunkTable.entryLength
        try Data(sealed.prefix(written)).write(to: URL(fileURLWithPath: path))
        #expect(truncate(path, off_t(preamble.sealedLength)) == 0, "a sparse file of \(preamble.sealedLength) bytes")
        #expect { try SealedModel.readHeader(path: path) } throws: { error in
            guard case ContainerError.malformedHeader(let reason) = error else { return false }
            return reason == "an empty chunk in a non-empty plaintext"
        }
    }

    @Test("table rules: lengths over 4 MiB, empty chunks and sums other than the plaintext length are refused")
    func tableRules() throws {
        func entry(_ length: UInt32) -> ChunkTable.Entry { .init(id: ChunkID([UInt8](repeating: 1, count: 32)), length: length) }
        func bytes(_ entries: [ChunkTable.Entry]) -> [UInt8] { ChunkTable(entries: entries).encoded() }
        #expect(throws: ContainerError.self) { try ChunkTable(parsing: bytes([entry(5 << 20)]), count: 1, plaintextLength: 5 << 20) }
        #expect(throws: ContainerError.self) { try ChunkTable(parsing: bytes([entry(0), entry(4)]), count: 2, plaintextLength: 4) }
        #expect(throws: ContainerError.self) { try ChunkTable(parsing: bytes([entry(3), entry(4)]), count: 2, plaintextLength: 8) }
        #expect(try ChunkTable(parsing: bytes([entry(0)]), count: 1, plaintextLength: 0).count == 1)
        #expect(try ChunkTable(parsing: bytes([entry(3), entry(4)]), count: 2, plaintextLength: 7).plaintextLength == 7)
    }

    @Test("version 1 is still written on request and read")
    func versionOneStillWorks() throws {
        var options = SealedModel.Options()
        options.formatVersion = 1
        let plaintext = Self.noise(200_000, seed: 7)
        let sealed = try SealedModel.seal(plaintext, name: "m", using: Self.key, options: options)
        #expect(try Self.header(sealed).version == 1)
        #expect(try SealedModel.open(sealed, using: Self.key) == plaintext)
    }
}
