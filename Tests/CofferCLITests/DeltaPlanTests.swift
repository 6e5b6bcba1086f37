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
        #expect(whole.run(containing: header.sealedLength) == nil)
    }
}
