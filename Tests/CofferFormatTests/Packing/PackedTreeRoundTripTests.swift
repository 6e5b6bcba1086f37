import BlockingTestSupport
import Foundation
import Testing
@testable import CofferFormat

@Suite("Packed tree round trips", .ownThread)
struct PackedTreeRoundTripTests {
    static let folders: [(String, Int)] = [
        ("a", 0o755), ("a/b", 0o700), ("a/empty", 0o750), ("ro", 0o555), ("sub", 0o755),
        (".config", 0o755), ("Ωmega", 0o755),
    ]
    static let bigFile: [UInt8] = {
        var state: UInt32 = 12345
        return (0..<200_000).map { _ in
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
    }()
    static let files: [(String, [UInt8], Int)] = [
        ("a/b/deep.txt", Array("deep".utf8), 0o644), ("a-b", Array("dash".utf8), 0o644),
        ("a.txt", Array("dot".utf8), 0o600), ("empty.bin", [], 0o644),
        ("run.sh", Array("#!/bin/sh\necho hi\n".utf8), 0o755), ("ro/inside.txt", Array("ro".utf8), 0o444),
        ("x", Array("target".utf8), 0o644), (".hidden", Array("h".utf8), 0o644),
        (".config/settings.json", Array("{}".utf8), 0o640), ("naïve-日本語.txt", Array("unicode".utf8), 0o644),
        ("Ωmega/ü.bin", [1, 2, 3], 0o644), ("big.bin", bigFile, 0o644),
    ]
    static let links: [(String, String)] = [("sub/link", "../x"), ("a/b/up", "../../run.sh"), ("alias", "a/b")]

    /// Builds the fixture tree at `root` (which must not exist), creating items in either order.
    static func makeTree(at root: String, reversed: Bool = false) throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        let order: ([Int]) -> [Int] = { reversed ? $0.reversed() : $0 }
        for index in order(Array(folders.indices)) {
            try PackingSandbox.folder(root, folders[index].0)
        }
        for index in order(Array(files.indices)) {
            try PackingSandbox.file(root, files[index].0, files[index].1, mode: files[index].2)
        }
        for index in order(Array(links.indices)) {
            try PackingSandbox.symlink(root, links[index].0, to: links[index].1)
        }
        for (path, mode) in folders.reversed() { try PackingSandbox.chmod(root + "/" + path, mode) }
        try PackingSandbox.chmod(root, 0o750)
    }

    @Test func roundTripRestoresTheSameTree() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        try Self.makeTree(at: sandbox.sub("src"))
        let tree = try PackedTree(root: sandbox.sub("src"))
        let stream = try PackingTestKit.fullRead(tree)
        try PackingTestKit.unpack(stream, into: sandbox.sub("out"))
        let restored = try PackingSandbox.snapshot(sandbox.sub("out"))
        // The same tree, owner-only: the restored tree is plaintext.
        #expect(restored == PackingSandbox.ownerOnly(try PackingSandbox.snapshot(sandbox.sub("src"))))
        #expect(restored["run.sh"]?.hasPrefix("f 700 ") == true)
        #expect(restored["ro"] == "d 500")
        #expect(restored["a/empty"] == "d 700")
        #expect(restored["sub/link"] == "l ../x")
        #expect(restored["."] == "d 700")
        #expect(restored["naïve-日本語.txt"] != nil)
    }

    @Test func entriesDescribeTheTreeInStreamOrder() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        try Self.makeTree(at: sandbox.sub("src"))
        let tree = try PackedTree(root: sandbox.sub("src"))
        let paths = tree.entries.map(\.path)
        #expect(paths.count == Self.folders.count + Self.files.count + Self.links.count)
        for (earlier, later) in zip(paths, paths.dropFirst()) {
            #expect(PackedTree.compare(earlier, later))
        }
        let aIndex = try #require(paths.firstIndex(of: "a"))
        #expect(paths[aIndex + 1] == "a/b")
        #expect(paths.firstIndex(of: "a/empty")! < paths.firstIndex(of: "a-b")!)
        #expect(paths.firstIndex(of: "a-b")! < paths.firstIndex(of: "a.txt")!)
        let byPath = Dictionary(uniqueKeysWithValues: tree.entries.map { ($0.path, $0) })
        #expect(byPath["run.sh"] == .init(kind: .file(size: 18), path: "run.sh", mode: 0o755))
        #expect(byPath["ro"] == .init(kind: .directory, path: "ro", mode: 0o555))
        #expect(byPath["sub/link"] == .init(kind: .symlink(target: "../x"), path: "sub/link", mode: 0o777))
        #expect(byPath["big.bin"]?.kind == .file(size: 200_000))
        #expect(tree.rootMode == 0o750)
    }

    @Test func packingIsDeterministic() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        try Self.makeTree(at: sandbox.sub("one"))
        try Self.makeTree(at: sandbox.sub("two"), reversed: true)
        let first = try PackingTestKit.fullRead(PackedTree(root: sandbox.sub("one")))
        let again = try PackingTestKit.fullRead(PackedTree(root: sandbox.sub("one")))
        let other = try PackingTestKit.fullRead(PackedTree(root: sandbox.sub("two")))
        #expect(first == again)
        #expect(first == other)
        #expect(first.starts(with: [0x43, 0x4F, 0x46, 0x54, 0x52, 0x45, 0x45, 0x01]))
    }

    @Test func streamFedOneByteAtATimeRestoresTheSameTree() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        try Self.makeTree(at: sandbox.sub("src"))
        let stream = try PackingTestKit.fullRead(PackedTree(root: sandbox.sub("src")))
        let expected = PackingSandbox.ownerOnly(try PackingSandbox.snapshot(sandbox.sub("src")))
        for (index, piece) in [1, 7, 4096, 70_000].enumerated() {
            let destination = sandbox.sub("out\(index)")
            try PackingTestKit.unpack(stream, into: destination, piece: piece, expectedLength: UInt64(stream.count))
            #expect(try PackingSandbox.snapshot(destination) == expected, "piece size \(piece)")
        }
    }

    @Test func readServesEveryRange() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = sandbox.sub("src")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        try PackingSandbox.folder(root, "d")
        try PackingSandbox.file(root, "d/f1", "hello")
        try PackingSandbox.file(root, "e", "")
        try PackingSandbox.symlink(root, "l", to: "d/f1")
        try PackingSandbox.file(root, "z", "world!!")
        let tree = try PackedTree(root: root)
        let full = try PackingTestKit.fullRead(tree)
        #expect(UInt64(full.count) == tree.length)
        for offset in 0..<full.count {
            for size in 1...(full.count - offset) {
                var part = [UInt8](repeating: 0, count: size)
                try part.withUnsafeMutableBytes { try tree.read(into: $0, at: UInt64(offset)) }
                #expect(part[...] == full[offset..<offset + size], "offset \(offset) size \(size)")
            }
        }
        var beyond = [UInt8](repeating: 0, count: 1)
        #expect(throws: IOFailure.self) {
            try beyond.withUnsafeMutableBytes { try tree.read(into: $0, at: tree.length) }
        }
    }

    @Test func emptyRootFolder() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = sandbox.sub("src")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        try PackingSandbox.chmod(root, 0o711)
        let tree = try PackedTree(root: root)
        #expect(tree.length == 14)
        #expect(tree.entries.isEmpty)
        let stream = try PackingTestKit.fullRead(tree)
        #expect(stream == Array("COFTREE".utf8) + [1, 0, 0, 0, 0, 0x01, 0xC9])
        try PackingTestKit.unpack(stream, into: sandbox.sub("out"))
        #expect(try PackingSandbox.snapshot(sandbox.sub("out")) == [".": "d 700"])
    }

    @Test func hardLinksArePackedAsIndependentFiles() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = sandbox.sub("src")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        try PackingSandbox.file(root, "one", "shared")
        try FileManager.default.linkItem(atPath: root + "/one", toPath: root + "/two")
        let tree = try PackedTree(root: root)
        #expect(tree.entries.map(\.kind) == [.file(size: 6), .file(size: 6)])
        try PackingTestKit.unpack(try PackingTestKit.fullRead(tree), into: sandbox.sub("out"))
        #expect(try String(contentsOfFile: sandbox.sub("out/two"), encoding: .utf8) == "shared")
    }

    @Test func readRefusesAFileThatShrankAfterPacking() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = sandbox.sub("src")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        try PackingSandbox.file(root, "f", "0123456789")
        let tree = try PackedTree(root: root)
        try PackingSandbox.file(root, "f", "0123")
        #expect(throws: IOFailure.self) { try PackingTestKit.fullRead(tree) }
    }

    @Test func aFolderSwappedForASymlinkDuringTheWalkBringsInNothingFromOutside() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = sandbox.sub("src"), outside = sandbox.sub("outside")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: false)
        try PackingSandbox.folder(root, "sub")
        try PackingSandbox.file(root, "sub/id_key", "inside")
        try PackingSandbox.file(outside, "id_key", "OUTSIDE SECRET")
        // Once `sub` is listed, someone who can write into the folder swaps it for a link to a
        // folder outside holding a file of a listed name.
        let tree = try PackedTree(root: root) { path in
            guard path == root + "/sub" else { return }
            _ = rename(root + "/sub", root + "/sub.moved")
            _ = symlink(outside, root + "/sub")
        }
        #expect(tree.entries.map(\.path) == ["sub", "sub/id_key"])
        #expect(tree.entries.last?.kind == .file(size: 6), "the walk saw the file inside the tree")
        // Read by path, it is another file now: refused, and nothing of it is in the stream.
        #expect(throws: PackingError.self) { _ = try PackingTestKit.fullRead(tree) }
    }

    @Test func filesPastWhatAContainerHoldsAreRefusedWhileWalking() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = sandbox.sub("src")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        // Sparse files (ext4 takes 2^43 bytes each; other file systems up to 2^63, where sums of
        // sizes would overflow): 32 of them are exactly 2^48 bytes, what a sealed model holds.
        func sparse(_ name: String) throws {
            let descriptor = open(root + "/" + name, O_WRONLY | O_CREAT, 0o600)
            try #require(descriptor >= 0)
            let truncated = ftruncate(descriptor, 1 << 43)
            close(descriptor)
            try #require(truncated == 0, "the file system takes sparse files of 2^43 bytes")
        }
        for index in 0..<32 { try sparse(String(format: "f%02d", index)) }
        #expect(try PackedTree(root: root).entries.count == 32)
        try sparse("g")
        #expect(throws: PackingError.self) { _ = try PackedTree(root: root) }
    }

    @Test func comparisonIsComponentWise() {
        #expect(PackedTree.compare("a", "a/b"))
        #expect(PackedTree.compare("a/b", "a-b"))
        #expect(PackedTree.compare("a/zzz", "a.txt"))
        #expect(PackedTree.compare("A", "a"))
        #expect(PackedTree.compare("b", "é"))
        #expect(!PackedTree.compare("a", "a"))
        #expect(!PackedTree.compare("a/b", "a"))
        #expect(!PackedTree.compare("a-b", "a/b"))
    }
}
