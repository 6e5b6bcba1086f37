import CofferFormat
import Foundation
import Testing
@testable import Coffer

/// The plan of a delta update, from two real version 2 containers: what is copied, what is
/// downloaded, and that the runs cover the new container exactly.
@Suite("Delta plans")
struct DeltaPlanTests {
    static let key = ModelKey.generate(name: "plan")

    static func noise(_ count: Int) -> [UInt8] { Array(CLI.randomData(count).prefix(count)) }

    /// Seals `plaintext` to a file; returns its path and header.
    static func sealed(_ plaintext: [UInt8], _ name: String, in folder: URL, key: ModelKey = key) throws -> (String, ContainerHeader) {
        let path = folder.appendingPathComponent(name).path
        let bytes = try SealedModel.seal(plaintext, name: name, using: .modelKey(key))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, try SealedModel.readHeader(path: path))
    }

    @Test("a changed stretch is one download between two copies; runs cover the container without gaps")
    func changedStretch() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-plan-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = Self.noise(6 << 20)
        var next = base
        next.replaceSubrange(3_000_000..<3_020_000, with: Self.noise(20_000))
        let (oldPath, _) = try Self.sealed(base, "old", in: folder)
        let (_, header) = try Self.sealed(next, "new", in: folder)
        let plan = DeltaPlan(header: header, size: header.sealedLength, cached: CachedChunks(paths: [oldPath], keyID: Self.key.id))
        // Header, copy, changed stretch, copy.
        #expect(plan.runs.map { $0.source == .remote } == [true, false, true, false], "\(plan.runs)")
        #expect(plan.runs.first?.range.lowerBound == 0 && plan.runs.last?.range.upperBound == header.sealedLength)
        for (run, following) in zip(plan.runs, plan.runs.dropFirst()) { #expect(run.range.upperBound == following.range.lowerBound) }
        #expect(plan.localBytes() > header.sealedLength * 3 / 4)
        #expect(plan.localBytes(from: header.sealedLength) == 0)

        // Another key shares nothing: no cached chunk is found, the plan is one download.
        let nothing = CachedChunks(paths: [oldPath], keyID: "other")
        #expect(nothing.isEmpty)
        let whole = DeltaPlan(header: header, size: header.sealedLength, cached: nothing)
        #expect(whole.runs.count == 1 && whole.localBytes() == 0)
        #expect(whole.runs(from: header.sealedLength).isEmpty)
    }

    @Test("a header that names a chunk table longer than the bound is not read before verification: the download goes on whole")
    func oversizedTable() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-plan-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (cachedPath, _) = try Self.sealed(Self.noise(1 << 20), "cached", in: folder)
        let (_, header) = try Self.sealed(Self.noise(1 << 20), "new", in: folder)
        // Whoever answers for the blob rewrites the fields: a plaintext of 2^40 bytes in 2^32 - 1
        // chunks (a table of ~154 GB), and names the container's size to match the manifest's.
        var bytes = header.encoded()
        let plaintext: UInt64 = 1 << 40, chunks: UInt32 = .max
        for i in 0..<8 { bytes[16 + i] = UInt8(truncatingIfNeeded: plaintext >> (56 - 8 * UInt64(i))) }
        for i in 0..<4 { bytes[56 + i] = UInt8(truncatingIfNeeded: chunks >> (24 - 8 * UInt32(i))) }
        let preamble = try #require(try ContainerHeader.preamble(from: bytes))
        #expect(preamble.headerLength > DeltaState.maximumHeaderLength)

        let part = folder.appendingPathComponent("new.part").path
        // The part file holds the probe's 64 KiB, as after the first request.
        try Data(bytes + [UInt8](repeating: 0, count: Int(BlobFetcher.headerProbe) - bytes.count)).write(to: URL(fileURLWithPath: part))
        let writer = try PartWriter(path: part, expectedSize: preamble.sealedLength)
        let next = DeltaState.learningHeader.next(at: writer.offset, size: preamble.sealedLength, keyID: Self.key.id, writer: writer,
                                                  cachedModels: [cachedPath], skipped: { _ in })
        guard case .whole = next.state, case .download(let end) = next.step else {
            Issue.record("the delta went on learning a \(preamble.headerLength)-byte header: \(next)")
            return
        }
        #expect(end == preamble.sealedLength)

        // A follower that decrypts the download as it comes reads the header the same way: it
        // declines, where reading the header would have allocated the table.
        let progress = PartProgress()
        progress.advance(to: BlobFetcher.headerProbe)
        let source = GrowingPartSource(file: try PositionalFile(readingAt: part), progress: progress, length: preamble.sealedLength)
        #expect(try ModelFollower.header(of: source) == nil)
    }

    @Test("a header that names a key other than the manifest's plans nothing: the download goes on whole")
    func headerNamesAnotherKey() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-plan-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = Self.noise(2 << 20)
        let (cachedPath, _) = try Self.sealed(base, "cached", in: folder)
        let (newPath, header) = try Self.sealed(base, "new", in: folder)
        let part = folder.appendingPathComponent("new.part").path
        try Data(try Data(contentsOf: URL(fileURLWithPath: newPath)).prefix(Int(BlobFetcher.headerProbe))).write(to: URL(fileURLWithPath: part))
        let writer = try PartWriter(path: part, expectedSize: header.sealedLength)
        // The manifest names the key the header names: every chunk is copied.
        let planned = DeltaState.learningHeader.next(at: writer.offset, size: header.sealedLength, keyID: Self.key.id, writer: writer,
                                                     cachedModels: [cachedPath], skipped: { _ in })
        #expect(planned.state.isPlanned)
        // The manifest names another key (a mirror rewrote the header's, or served another model's
        // header): the cached chunks are not looked at.
        let other = DeltaState.learningHeader.next(at: writer.offset, size: header.sealedLength, keyID: ModelKey.generate(name: "other").id,
                                                   writer: writer, cachedModels: [cachedPath], skipped: { _ in })
        guard case .whole = other.state, case .download(let end) = other.step else {
            Issue.record("a plan was made from a header naming another key: \(other)")
            return
        }
        #expect(end == header.sealedLength)
    }
}
