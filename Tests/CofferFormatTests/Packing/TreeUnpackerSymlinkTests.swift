import Foundation
import Testing
@testable import CofferFormat

@Suite("Tree unpacker symlink refusals")
struct TreeUnpackerSymlinkTests {
    @Test func symlinksInsideTheTreeAreAccepted() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        var stream = PackStream(count: 6)
        stream.dir("a")
        stream.dir("a/b")
        stream.symlink("a/b/top", to: "../..")
        stream.symlink("a/b/up", to: "../../x/./y/")
        stream.symlink("a/here", to: ".")
        stream.file("x")
        try PackingTestKit.unpack(stream.bytes, into: sandbox.sub("out"))
        let snapshot = try PackingSandbox.snapshot(sandbox.sub("out"))
        #expect(snapshot["a/b/top"] == "l ../..")
        #expect(snapshot["a/b/up"] == "l ../../x/./y/")
    }

    @Test func parentIsASymlink() throws {
        var stream = PackStream(count: 3)
        stream.dir("d")
        stream.symlink("l", to: "d")
        stream.file("l/x", Array("through the link".utf8))
        try PackingTestKit.expectRefused(stream.bytes)
        // A symlink leading out of the destination, then an entry through it: refused at the link.
        var escaping = PackStream(count: 2)
        escaping.symlink("l", to: "../outside")
        escaping.file("l/pwned", Array("x".utf8))
        try PackingTestKit.expectRefused(escaping.bytes)
    }

    @Test func symlinkToAbsolutePath() throws {
        var stream = PackStream(count: 1)
        stream.symlink("l", to: "/etc/passwd")
        try PackingTestKit.expectRefused(stream.bytes)
    }

    @Test func symlinkEscapingWithDotDot() throws {
        var stream = PackStream(count: 2)
        stream.dir("a")
        stream.symlink("a/l", to: "../../outside/keep.txt")
        try PackingTestKit.expectRefused(stream.bytes)
        var root = PackStream(count: 1)
        root.symlink("l", to: "..")
        try PackingTestKit.expectRefused(root.bytes)
    }

    @Test func symlinkWithDotDotAfterAComponent() throws {
        var stream = PackStream(count: 2)
        stream.dir("a")
        stream.symlink("a/l", to: "a/../../x")
        try PackingTestKit.expectRefused(stream.bytes)
        var inside = PackStream(count: 2)  // stays inside, but ".." is not leading
        inside.dir("a")
        inside.symlink("a/l", to: "b/../c")
        try PackingTestKit.expectRefused(inside.bytes)
    }

    @Test func symlinkWithBadModeOrEmptyTarget() throws {
        var mode = PackStream(count: 1)
        mode.head(kind: 3, mode: 0o755, path: Array("l".utf8))
        mode.u16(1)
        mode.bytes += Array("x".utf8)
        try PackingTestKit.expectRefused(mode.bytes)
        var empty = PackStream(count: 1)
        empty.symlink("l", to: "")
        try PackingTestKit.expectRefused(empty.bytes)
    }
}
