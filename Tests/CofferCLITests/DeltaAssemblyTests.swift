import BlockingTestSupport
@testable import Coffer
import CofferFormat
import Crypto
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A delta update's assembly: cached runs copied on one thread while the missing runs download
/// and a second thread hashes everything in order; what a follower is told; and what a run
/// stopped half way leaves for the next one.
@Suite("Delta assembly")
struct DeltaAssemblyTests {
    /// `count` pseudo-random bytes (a seeded generator, so a failure can be replayed).
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return testBytes(count) { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    static func folder() throws -> URL {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("coffer-assembly-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A new container of `size` bytes and a cached file: the plan's local runs copy `cached`
    /// bytes; `wanted` is what the part file must end up holding.
    struct Fixture {
        let dir: URL
        let cachedPath: String
        let partPath: String
        let wanted: [UInt8]
        let plan: DeltaPlan

        /// Runs alternate download / copy over `cuts` (offsets of the new container), starting with a
        /// download (the header). Each copied run takes its bytes from a different place of the cached file.
        init(size: Int, cuts: [Int], seed: UInt64) throws {
            dir = try DeltaAssemblyTests.folder()
            cachedPath = dir.appendingPathComponent("cached.coffer").path
            partPath = dir.appendingPathComponent("new.part").path
            let cached = DeltaAssemblyTests.bytes(size + 12_345, seed: seed)
            try Data(cached).write(to: URL(fileURLWithPath: cachedPath))
            var wanted = DeltaAssemblyTests.bytes(size, seed: seed + 1)
            var runs: [DeltaPlan.Run] = []
            let bounds = [0] + cuts + [size]
            for (index, (start, end)) in zip(bounds, bounds.dropFirst()).enumerated() {
                if index % 2 == 1 {
                    let from = (start * 7 + 333) % 12_345
                    wanted.replaceSubrange(start..<end, with: cached[from..<from + (end - start)])
                    runs.append(DeltaPlan.Run(range: UInt64(start)..<UInt64(end), source: .local(path: cachedPath, offset: UInt64(from))))
                } else {
                    runs.append(DeltaPlan.Run(range: UInt64(start)..<UInt64(end), source: .remote))
                }
            }
            self.wanted = wanted
            plan = DeltaPlan(runs: runs)
        }

        /// Downloads `range` of `wanted` into `sink` as a server would answer it, in pieces of
        /// 1 to ~200 KiB, yielding between them so the copy and the hash run meanwhile.
        func serve(_ range: Range<UInt64>, into sink: RangeSink) async throws(SyncFailure) {
            let (first, last) = (range.lowerBound, range.upperBound - 1)
            let response = PartWriterTests.answer(206, first: first, last: last, total: UInt64(wanted.count))
            sink.beginPiece()
            var offset = Int(first)
            for size in PartWriterTests.sizes(total: range.count, seed: first) {
                do {
                    try sink.accept(Data(wanted[offset..<offset + size]), response: response, first: first, last: last, total: UInt64(wanted.count))
                } catch {
                    throw (error as? PartWriter.Refusal)?.failure ?? .cache("\(error)")
                }
                offset += size
                await Task.yield()
            }
        }
    }

    @Test("copied and downloaded runs at unaligned offsets land byte for byte, and the hash covers the bytes in order",
          arguments: [[70_000, 5 << 20 | 3, 5 << 20 | 90_000], [1, 2, 3, 9 << 20 | 77], [65_536, 12 << 20 | 5]] as [[Int]])
    func assembles(cuts: [Int]) async throws {
        let fixture = try Fixture(size: 14 << 20 | 4_321, cuts: cuts, seed: UInt64(cuts.count))
        defer { try? FileManager.default.removeItem(at: fixture.dir) }
        let size = UInt64(fixture.wanted.count)
        // The header (the first run) is downloaded before the plan is made, as BlobFetcher does.
        let headerEnd = Int(fixture.plan.runs[0].range.upperBound)
        try Data(fixture.wanted[..<headerEnd]).write(to: URL(fileURLWithPath: fixture.partPath))
        let writer = try PartWriter(path: fixture.partPath, expectedSize: size)
        let progress = PartProgress()
        writer.attach(progress)
        let outcome = try await DeltaAssembly.assemble(fixture.plan, size: size, into: writer) { (range, sink) throws(SyncFailure) in
            try await fixture.serve(range, into: sink)
        }
        #expect(outcome == .complete)
        #expect(writer.offset == size)
        #expect(writer.finish() == SHA256.hash(data: fixture.wanted).hexString)
        try progress.wait(until: size)
        try writer.synchronize()
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixture.partPath))) == fixture.wanted)
    }

    @Test("a follower is told only what is on disk: a held download keeps it there while later runs are copied")
    func followerWaitsForHeldDownload() async throws {
        let fixture = try Fixture(size: 10 << 20, cuts: [4_096, 2 << 20, 2 << 20 | 500_000], seed: 9)
        defer { try? FileManager.default.removeItem(at: fixture.dir) }
        let size = UInt64(fixture.wanted.count)
        try Data(fixture.wanted[..<4_096]).write(to: URL(fileURLWithPath: fixture.partPath))
        let writer = try PartWriter(path: fixture.partPath, expectedSize: size)
        let progress = PartProgress()
        writer.attach(progress)
        let held = fixture.plan.runs[2].range
        let release = AsyncStream<Void>.makeStream()
        async let assembled = DeltaAssembly.assemble(fixture.plan, size: size, into: writer) { (range, sink) throws(SyncFailure) in
            if range == held { for await _ in release.stream { break } }
            try await fixture.serve(range, into: sink)
        }
        // The last run (copied) reaches the end of the file while the download before it is held.
        let file = try PositionalFile(readingAt: fixture.partPath)
        for _ in 0..<2_000 where try file.size() < size { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(try file.size() == size, "the copy did not go on past the held download")
        // The copy before the held download is reported; nothing past the download's start is.
        progress.close()
        try progress.wait(until: held.lowerBound)
        #expect(throws: PartProgress.Stop.closed) { try progress.wait(until: held.lowerBound + 1) }
        release.continuation.yield()
        #expect(try await assembled == .complete)
        #expect(writer.finish() == SHA256.hash(data: fixture.wanted).hexString)
    }

    /// A fixture whose part file holds its header, and a writer for it.
    static func started(seed: UInt64) throws -> (Fixture, PartWriter) {
        let fixture = try Fixture(size: 6 << 20, cuts: [4_096, 5 << 20], seed: seed)
        try Data(fixture.wanted[..<4_096]).write(to: URL(fileURLWithPath: fixture.partPath))
        return (fixture, try PartWriter(path: fixture.partPath, expectedSize: UInt64(fixture.wanted.count)))
    }

    @Test("a cached file shorter than its run, a server ignoring Range or a plan past the end falls back, the offset where it was")
    func fallsBack() async throws {
        let (fixture, writer) = try Self.started(seed: 4)
        defer { try? FileManager.default.removeItem(at: fixture.dir) }
        let size = UInt64(fixture.wanted.count)
        // The cached file lost its end.
        let cached = try FileHandle(forUpdating: URL(fileURLWithPath: fixture.cachedPath))
        try cached.truncate(atOffset: 1 << 20)
        try cached.close()
        let shortCache = try await DeltaAssembly.assemble(fixture.plan, size: size, into: writer) { (range, sink) throws(SyncFailure) in
            try await fixture.serve(range, into: sink)
        }
        #expect(shortCache == .fallBack)
        #expect(writer.offset == 4_096)
        // A plan that runs past the model's size is not followed.
        #expect(try await DeltaAssembly.assemble(fixture.plan, size: size - 1, into: writer) { (_, _) throws(SyncFailure) in } == .fallBack)
        #expect(writer.offset == 4_096)

        // A 200 to a Range request of a delta (the cached file intact): nothing of it is taken.
        let (intact, intactWriter) = try Self.started(seed: 6)
        defer { try? FileManager.default.removeItem(at: intact.dir) }
        let whole = PartWriterTests.answer(200, first: 0, last: size - 1, total: size)
        let follower = PartProgress()
        intactWriter.attach(follower)
        let ignored = try await DeltaAssembly.assemble(intact.plan, size: size, into: intactWriter) { (range, sink) throws(SyncFailure) in
            sink.beginPiece()
            do {
                try sink.accept(Data(intact.wanted), response: whole, first: range.lowerBound, last: range.upperBound - 1, total: size)
            } catch {
                throw (error as? PartWriter.Refusal)?.failure ?? .cache("\(error)")
            }
        }
        #expect(ignored == .fallBack)
        #expect(intactWriter.offset == 4_096)
        // Copied runs were published to a follower; the whole download writes them again.
        #expect(follower.wasRewound)
    }

    @Test("a failed download is thrown, the offset stays, and more bytes than asked for are refused")
    func failedDownload() async throws {
        let (fixture, writer) = try Self.started(seed: 5)
        defer { try? FileManager.default.removeItem(at: fixture.dir) }
        let size = UInt64(fixture.wanted.count)
        await #expect(throws: SyncFailure.self) {
            _ = try await DeltaAssembly.assemble(fixture.plan, size: size, into: writer) { (_, _) throws(SyncFailure) in
                throw .server(.answer(status: 404, code: "not_found", reason: "gone"))
            }
        }
        #expect(writer.offset == 4_096)
        // A run of 1 MiB answered with 1 MiB and one byte: the extra byte is refused, not written past the run.
        let run = fixture.plan.runs[2].range
        let sink = RangeSink(run, of: try PositionalFile(readingAt: fixture.partPath),
                             frontier: DeltaAssembly.Frontier(fixture.plan.runs, end: size, reached: { _ in }))
        let answer = PartWriterTests.answer(206, first: run.lowerBound, last: run.upperBound - 1, total: size)
        sink.beginPiece()
        #expect(throws: PartWriter.Refusal.self) {
            try sink.accept(Data(count: Int(run.upperBound - run.lowerBound) + 1), response: answer, first: run.lowerBound,
                            last: run.upperBound - 1, total: size)
        }
        #expect(sink.offset == run.lowerBound)
        // A 206 of other bytes than asked for is refused on its first piece.
        sink.beginPiece()
        let other = PartWriterTests.answer(206, first: run.lowerBound + 1, last: run.upperBound - 1, total: size)
        #expect(throws: PartWriter.Refusal.self) {
            try sink.accept(Data(count: 1), response: other, first: run.lowerBound, last: run.upperBound - 1, total: size)
        }
    }

    @Test("a part file with a hole (a copy killed half way) resumes from the last whole MiB before it")
    func resumesBeforeHole() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let partPath = dir.appendingPathComponent("new.part").path
        // Written in order up to 3 MiB + 100 bytes, then a later block only, as an assembly can leave it.
        let first = Self.bytes((3 << 20) + 100, seed: 11)
        let later = Self.bytes(4 << 20, seed: 12)
        let file = try PositionalFile(adopting: open(partPath, O_RDWR | O_CREAT, 0o600), path: partPath)
        try first.withUnsafeBytes { try file.write($0, at: 0) }
        try later.withUnsafeBytes { try file.write($0, at: 8 << 20) }
        let holeAt = lseek(file.descriptor, 0, 4)
        try #require(holeAt > 0 && holeAt < 8 << 20, "this file system reports no holes; the case cannot be shown here")

        let writer = try PartWriter(path: partPath, expectedSize: 16 << 20)
        #expect(writer.offset == 3 << 20)
        #expect(writer.finish() == SHA256.hash(data: first[..<(3 << 20)]).hexString)
        #expect(try file.size() == 3 << 20)

        // A file without holes is taken whole, as before.
        let whole = dir.appendingPathComponent("whole.part").path
        try Data(first).write(to: URL(fileURLWithPath: whole))
        #expect(try PartWriter(path: whole, expectedSize: 16 << 20).offset == UInt64(first.count))
    }
}
