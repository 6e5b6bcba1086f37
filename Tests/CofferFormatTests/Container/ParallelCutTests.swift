import BlockingTestSupport
import Foundation
import Testing
@testable import CofferFormat

/// The cut on several threads must be the one-thread cut, byte for byte: delta updates share
/// chunks only between versions cut alike, and the Python reference cuts on one thread.
@Suite("Version 2: the plaintext cut on several threads", .ownThread)
struct ParallelCutTests {
    static let gear = DeterministicSealingTests.gear

    /// A source with forced chunk starts (a packed folder's entries).
    typealias Segmented = ChunkerVectorTests.Segmented

    static func expectSameCut(_ source: some PlaintextSource, threads: [Int] = [2, 3, 5], stretch: UInt64 = 1 << 20,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let one = try ContentChunker.lengths(of: source, segmentStarts: source.segmentStarts, gear: gear)
        #expect(one.reduce(UInt64(0)) { $0 + UInt64($1) } == source.length, sourceLocation: sourceLocation)
        for count in threads {
            let several = try ContentChunker.lengths(
                of: source, segmentStarts: source.segmentStarts, gear: gear, threads: count, minimumStretch: stretch)
            #expect(several == one, "\(count) threads cut \(several.count) chunks, one thread \(one.count)", sourceLocation: sourceLocation)
        }
    }

    @Test("random bytes: every thread count cuts as one thread")
    func randomBytes() throws {
        let plaintext = DeterministicSealingTests.noise(12 << 20, seed: 21)
        try Self.expectSameCut(BytesSource(plaintext))
        // Stretches of one chunk's length or less: the threads' cuts rarely meet in time.
        try Self.expectSameCut(BytesSource(plaintext), threads: [8], stretch: 1)
    }

    @Test("zeros, where every chunk is the maximum and the threads' cuts never meet, still cut as one thread")
    func cutsThatNeverMeet() throws {
        var plaintext = [UInt8](repeating: 0, count: 9 << 20)
        plaintext += DeterministicSealingTests.noise(3 << 20 + 12_345, seed: 22)
        let one = try ContentChunker.lengths(of: BytesSource(plaintext), gear: Self.gear)
        #expect(one.prefix(9).allSatisfy { Int($0) == ContentChunker.maximumLength })
        try Self.expectSameCut(BytesSource(plaintext))
    }

    @Test("forced starts at, just before and just after the stretches' ends are kept")
    func forcedStarts() throws {
        let plaintext = DeterministicSealingTests.noise(12 << 20, seed: 23)
        let length = UInt64(plaintext.count)
        var starts: [UInt64] = [14, 70_000, 5 << 20 + 1]
        for threads in [2, 3, 5] {
            let stretch = length / UInt64(threads)
            for index in 1..<UInt64(threads) { starts += [index * stretch - 1, index * stretch, index * stretch + 1, index * stretch + 40_000] }
        }
        try Self.expectSameCut(Segmented(bytes: BytesSource(plaintext), segmentStarts: starts))
        // Unsorted, repeated and out-of-range starts are read as the one-thread cut reads them.
        try Self.expectSameCut(Segmented(bytes: BytesSource(plaintext), segmentStarts: [0, length, length + 9, 3 << 20, 3 << 20, 1 << 20]))
    }

    @Test("a container sealed on two threads (the cut split in two) equals one sealed on one thread, but for salt and MAC")
    func sealedOnSeveralThreads() throws {
        // Two 16 MiB stretches at least, the default, so sealing itself takes the parallel cut.
        // Other noise each run (as the system generator gave before), named in every failure.
        let seed = UInt8.random(in: .min ... .max)
        var plaintext = DeterministicSealingTests.noise(36 << 20, seed: seed)
        // Zeros across the middle, where the two threads' cuts cannot meet until the noise resumes.
        plaintext.replaceSubrange((17 << 20)..<(21 << 20), with: [UInt8](repeating: 0, count: 4 << 20))
        var one = SealedModel.Options()
        one.workers = 1
        var two = SealedModel.Options()
        two.workers = 2
        let key = DeterministicSealingTests.key
        let sealedOne = try SealedModel.seal(plaintext, name: "model.bin", using: key, options: one)
        let sealedTwo = try SealedModel.seal(plaintext, name: "model.bin", using: key, options: two)
        let headerOne = try DeterministicSealingTests.header(sealedOne)
        let headerTwo = try DeterministicSealingTests.header(sealedTwo)
        let table = try #require(headerTwo.chunkTable)
        #expect(table == headerOne.chunkTable, "noise seed \(seed)")
        #expect(table.entries.map(\.length) == (try ContentChunker.lengths(of: BytesSource(plaintext), gear: Self.gear)), "noise seed \(seed)")
        #expect(!table.entries.contains { $0.id == ChunkID.zero }, "noise seed \(seed)")
        // Compared as Data (one memcmp): `==` on 36 MiB of [UInt8] is a generic loop in a debug build.
        #expect(Data(sealedTwo.dropFirst(headerTwo.encodedLength)) == Data(sealedOne.dropFirst(headerOne.encodedLength)), "noise seed \(seed)")
        #expect(Data(try SealedModel.open(sealedTwo, using: key)) == Data(plaintext), "noise seed \(seed)")
    }

    @Test("a source below two stretches is cut on one thread; an empty one is one empty chunk")
    func small() throws {
        try Self.expectSameCut(BytesSource(DeterministicSealingTests.noise(300_000, seed: 24)), stretch: 1 << 20)
        #expect(try ContentChunker.lengths(of: BytesSource([]), gear: Self.gear, threads: 4, minimumStretch: 1) == [0])
    }
}
