import Foundation
import Testing
@testable import CofferFormat

@Suite("Removing a deep tree")
struct RemoveTreeDepthTests {
    /// `depth` nested folders named `d` under `root`, each holding a file, the deepest read-only;
    /// made through descriptors (the deepest paths are longer than PATH_MAX).
    static func makeDeepTree(_ root: String, depth: Int) throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        var folder = open(root, O_RDONLY | O_DIRECTORY)
        try #require(folder >= 0)
        for level in 0..<depth {
            try #require(mkdirat(folder, "d", 0o700) == 0)
            let child = openat(folder, "d", O_RDONLY | O_DIRECTORY)
            close(folder)
            folder = child
            try #require(folder >= 0)
            let file = openat(folder, "f", O_CREAT | O_WRONLY, 0o600)
            try #require(file >= 0)
            let text = Array("level \(level)".utf8)
            #expect(write(file, text, text.count) == text.count)
            close(file)
        }
        close(folder)
        // Every folder read-only, as a restored tree's may be (moving one up needs it writable).
        var path = root
        for _ in 0..<min(depth, 900) {
            path += "/d"
            #expect(chmod(path, 0o500) == 0)
        }
    }

    @Test("at most the limit of folders is open at once, and every level is removed (before: one descriptor a level)")
    func boundedDepth() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-deep-" + UUID().uuidString).path
        try Self.makeDeepTree(root, depth: 300)
        var deepest = 0
        TreeUnpacker.removeTree(root, maximumDepth: 8, descending: { deepest = max(deepest, $0) })
        #expect(!FileManager.default.fileExists(atPath: root))
        #expect(deepest <= 8)
        #expect(deepest >= 2)
    }

    @Test("the default limit removes a tree as deep as a packed path allows")
    func deepestPackedPath() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-deep-" + UUID().uuidString).path
        try Self.makeDeepTree(root, depth: PackedTree.Format.maxPathLength / 2)
        var deepest = 0
        TreeUnpacker.removeTree(root, maximumDepth: TreeUnpacker.maximumOpenDepth, descending: { deepest = max(deepest, $0) })
        #expect(!FileManager.default.fileExists(atPath: root))
        #expect(deepest <= TreeUnpacker.maximumOpenDepth)
    }

    @Test("without fchmodat's no-follow flag (glibc before 2.32), read-only and unreadable folders are still made writable, a symlink is not followed")
    func ownerWritableWithoutNoFollow() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-chmod-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { TreeUnpacker.removeTree(root) }
        let target = root + "/target"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
        #expect(chmod(target, 0o500) == 0)
        #expect(symlink(target, root + "/link") == 0)
        for (name, mode) in [("readonly", mode_t(0o500)), ("unreadable", mode_t(0o300))] {
            try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: false)
            #expect(chmod(root + "/" + name, mode) == 0)
        }
        let folder = open(root, O_RDONLY | O_DIRECTORY)
        defer { close(folder) }
        for name in ["readonly", "unreadable", "link"] { TreeUnpacker.makeOwnerWritable(folder, name, noFollowFirst: false) }
        var info = stat()
        for name in ["readonly", "unreadable"] {
            #expect(stat(root + "/" + name, &info) == 0 && info.st_mode & 0o777 == 0o700, "\(name)")
        }
        #expect(stat(target, &info) == 0 && info.st_mode & 0o777 == 0o500, "the link's target is untouched")
        #expect(chmod(target, 0o700) == 0)
    }
}
