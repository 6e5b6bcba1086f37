@testable import Coffer
import CofferFormat
import Crypto
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A delta update's copy of cached runs: two threads, blocks written out of order, the hash in
/// order; and what a run killed half way leaves for the next one.
@Suite("Delta run copy")
struct RunCopyTests {
    /// `count` pseudo-random bytes (a seeded generator, so a failure can be replayed).
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    static func folder() throws -> URL {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("coffer-runcopy-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("a run copied at unaligned offsets lands byte for byte, and the hash covers the bytes in order",
          arguments: [(0, 0, 10 << 20), (12_345, 3 << 20 | 777, (9 << 20) + 4_321), (5, 4 << 20, 1), (1 << 20, 17, 4 << 20)] as [(UInt64, UInt64, Int)])
    func copiesAndHashes(sourceOffset: UInt64, destinationOffset: UInt64, count: Int) async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = Self.bytes(Int(sourceOffset) + count + 99, seed: UInt64(count))
        let sourcePath = dir.appendingPathComponent("cached.coffer").path
        try Data(source).write(to: URL(fileURLWithPath: sourcePath))
        let prefix = Self.bytes(Int(destinationOffset), seed: 7)
        let partPath = dir.appendingPathComponent("new.part").path
        try Data(prefix).write(to: URL(fileURLWithPath: partPath))

        let writer = try PartWriter(path: partPath, expectedSize: destinationOffset + UInt64(count))
        #expect(writer.offset == destinationOffset)
        try await writer.appendCopy(UInt64(count), from: PositionalFile(readingAt: sourcePath), at: sourceOffset)
        #expect(writer.offset == destinationOffset + UInt64(count))
        let run = Array(source[Int(sourceOffset)..<Int(sourceOffset) + count])
        #expect(writer.finish() == SHA256.hash(data: prefix + run).hexString)
        try writer.synchronize()
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: partPath)))
        #expect(written.count == prefix.count + count)
        #expect(written == prefix + run)
    }

    @Test("a cached file shorter than the run fails the copy and leaves the offset where it was")
    func shortSource() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sourcePath = dir.appendingPathComponent("cached.coffer").path
        try Data(Self.bytes(6 << 20, seed: 3)).write(to: URL(fileURLWithPath: sourcePath))
        let writer = try PartWriter(path: dir.appendingPathComponent("new.part").path, expectedSize: 20 << 20)
        await #expect(throws: IOFailure.self) {
            try await writer.appendCopy(9 << 20, from: PositionalFile(readingAt: sourcePath), at: 0)
        }
        #expect(writer.offset == 0)
        // More than the model's size is refused before a byte is copied (no overflow either).
        await #expect(throws: IOFailure.self) {
            try await writer.appendCopy(.max, from: PositionalFile(readingAt: sourcePath), at: 0)
        }
        #expect(writer.offset == 0)
    }

    @Test("a part file with a hole (a copy killed half way) resumes from the last whole MiB before it")
    func resumesBeforeHole() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let partPath = dir.appendingPathComponent("new.part").path
        // Written in order up to 3 MiB + 100 bytes, then a later block only, as RunCopy can leave it.
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
