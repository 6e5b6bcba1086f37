import Foundation
import Testing
@testable import CofferFormat

@Suite("Tree unpacker refusals")
struct TreeUnpackerRefusalTests {
    /// A small valid stream: a folder, a file in it, a symlink and an empty file.
    static var validStream: [UInt8] {
        var stream = PackStream(count: 4)
        stream.dir("d")
        stream.file("d/f", Array("hello".utf8))
        stream.symlink("d/l", to: "../e")
        stream.file("e")
        return stream.bytes
    }

    @Test func validStreamIsAccepted() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        try PackingTestKit.unpack(Self.validStream, into: sandbox.sub("out"))
        let snapshot = try PackingSandbox.snapshot(sandbox.sub("out"))
        #expect(snapshot["d/l"] == "l ../e")
        // Stored 0o644, restored owner-only: the tree is plaintext.
        #expect(snapshot["d/f"]?.hasPrefix("f 600 5 ") == true)
    }

    @Test func absolutePath() throws {
        var stream = PackStream(count: 1)
        stream.file("/outside-abs", Array("x".utf8))
        try PackingTestKit.expectRefused(stream.bytes)
    }

    @Test func dotDotComponent() throws {
        var stream = PackStream(count: 1)
        stream.file("../outside/evil", Array("x".utf8))
        try PackingTestKit.expectRefused(stream.bytes)
        var inner = PackStream(count: 2)
        inner.dir("a")
        inner.file("a/../b", Array("x".utf8))
        try PackingTestKit.expectRefused(inner.bytes)
    }

    @Test func dotComponent() throws {
        var stream = PackStream(count: 2)
        stream.dir("a")
        stream.file("a/./b")
        try PackingTestKit.expectRefused(stream.bytes)
        var single = PackStream(count: 1)
        single.dir(".")
        try PackingTestKit.expectRefused(single.bytes)
    }

    @Test func emptyComponent() throws {
        var stream = PackStream(count: 2)
        stream.dir("a")
        stream.file("a//b")
        try PackingTestKit.expectRefused(stream.bytes)
        var trailing = PackStream(count: 1)
        trailing.dir("a/")
        try PackingTestKit.expectRefused(trailing.bytes)
    }

    @Test func nulByte() throws {
        var stream = PackStream(count: 1)
        stream.file("a\u{0}b")
        try PackingTestKit.expectRefused(stream.bytes)
    }

    @Test func notUTF8() throws {
        var stream = PackStream(count: 1)
        stream.head(kind: 2, mode: 0o644, path: [0x61, 0xFF])
        stream.u64(0)
        try PackingTestKit.expectRefused(stream.bytes)
    }

    @Test func duplicatePath() throws {
        var stream = PackStream(count: 2)
        stream.dir("a")
        stream.dir("a")
        try PackingTestKit.expectRefused(stream.bytes)
    }

    @Test func unsortedEntries() throws {
        var stream = PackStream(count: 2)
        stream.file("b")
        stream.file("a")
        try PackingTestKit.expectRefused(stream.bytes)
        var componentWise = PackStream(count: 3)  // "a-b" sorts after "a/…" component-wise
        componentWise.dir("a")
        componentWise.file("a-b")
        componentWise.file("a/c")
        try PackingTestKit.expectRefused(componentWise.bytes)
    }

    @Test func parentIsAFile() throws {
        var stream = PackStream(count: 2)
        stream.file("a", Array("x".utf8))
        stream.file("a/b", Array("y".utf8))
        try PackingTestKit.expectRefused(stream.bytes)
    }

    @Test func parentMissing() throws {
        var stream = PackStream(count: 1)
        stream.file("a/b", Array("y".utf8))
        try PackingTestKit.expectRefused(stream.bytes)
    }

    @Test func truncatedAtEveryOffset() throws {
        let stream = Self.validStream
        for cut in 0..<stream.count {
            try PackingTestKit.expectRefused(Array(stream[..<cut]))
        }
    }

    @Test func trailingBytes() throws {
        try PackingTestKit.expectRefused(Self.validStream + [0])
        try PackingTestKit.expectRefused(Self.validStream + [1], piece: 1)
    }

    @Test func entryCountMismatch() throws {
        var tooFew = PackStream(count: 3)  // declares 3, holds 2
        tooFew.dir("a")
        tooFew.file("b")
        try PackingTestKit.expectRefused(tooFew.bytes)
        var tooMany = PackStream(count: 1)  // declares 1, holds 2
        tooMany.dir("a")
        tooMany.file("b")
        try PackingTestKit.expectRefused(tooMany.bytes)
        try PackingTestKit.expectRefused(PackStream(count: 1_000_001).bytes)
    }

    @Test func hugeClaimedFileSize() throws {
        var stream = PackStream(count: 1)
        stream.head(kind: 2, mode: 0o644, path: Array("huge".utf8))
        stream.u64(UInt64.max)
        stream.bytes += Array("only a few bytes".utf8)
        try PackingTestKit.expectRefused(stream.bytes)
        try PackingTestKit.expectRefused(stream.bytes, expectedLength: UInt64(stream.bytes.count))
    }

    @Test func pathLengthZero() throws {
        var stream = PackStream(count: 1)
        stream.head(kind: 1, mode: 0o755, path: [])
        try PackingTestKit.expectRefused(stream.bytes)
    }

    @Test func badHeaderOrEntryFields() throws {
        var magic = PackStream(count: 0)
        magic.bytes[7] = 2
        try PackingTestKit.expectRefused(magic.bytes)
        try PackingTestKit.expectRefused(PackStream(count: 0, rootMode: 0o4755).bytes)
        var kind = PackStream(count: 1)
        kind.head(kind: 4, mode: 0o644, path: Array("a".utf8))
        try PackingTestKit.expectRefused(kind.bytes)
        var mode = PackStream(count: 1)
        mode.dir("a", mode: 0o1777)
        try PackingTestKit.expectRefused(mode.bytes)
        var long = PackStream(count: 1)
        long.head(kind: 1, mode: 0o755, path: Array(repeating: 0x61, count: 4097))
        try PackingTestKit.expectRefused(long.bytes)
    }

    @Test func refusesEverythingAfterAFailure() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let unpacker = try TreeUnpacker(destination: sandbox.sub("out"))
        let bad: [UInt8] = Array("NOTATREE".utf8) + [0, 0, 0, 0, 0, 0]
        #expect(throws: ContainerError.self) { try bad.withUnsafeBytes { try unpacker.consume($0) } }
        let good = PackStream(count: 0).bytes
        #expect(throws: ContainerError.self) { try good.withUnsafeBytes { try unpacker.consume($0) } }
        #expect(throws: ContainerError.self) { try unpacker.finish() }
    }

    @Test func destinationMustNotExist() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        #expect(throws: IOFailure.self) { _ = try TreeUnpacker(destination: sandbox.path) }
    }
}
