import Foundation
import Testing
@testable import CofferFormat
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Packing refusals")
struct PackingRefusalTests {
    /// Packs `root`, expecting a `PackingError` whose reason contains `reason`.
    static func expectPackingRefused(_ root: String, reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: PackingError.self, sourceLocation: sourceLocation) { _ = try PackedTree(root: root) }
        #expect(error?.reason.contains(reason) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
    }

    static func makeRoot(_ sandbox: PackingSandbox) throws -> String {
        let root = sandbox.sub("src")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        try PackingSandbox.folder(root, "models")
        try PackingSandbox.file(root, "models/weights.bin", "w")
        return root
    }

    @Test("a folder swapped for a symlink after the walk leads no read outside: the file read must be the one walked")
    func swappedFolderIsRefused() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = try Self.makeRoot(sandbox)
        // Outside the packed folder, a file of the same name and size as the one walked.
        try PackingSandbox.folder(sandbox.path, "secrets")
        try PackingSandbox.file(sandbox.path, "secrets/weights.bin", "S")
        let tree = try PackedTree(root: root)
        #expect(rename(root + "/models", root + "/models-walked") == 0)
        #expect(symlink(sandbox.sub("secrets"), root + "/models") == 0)
        var buffer = [UInt8](repeating: 0, count: Int(tree.length))
        let error = #expect(throws: PackingError.self) {
            try buffer.withUnsafeMutableBytes { try tree.read(into: $0, at: 0) }
        }
        #expect(error?.reason.contains("changed while being sealed") == true, "\(String(describing: error))")
        #expect(!buffer.contains(UInt8(ascii: "S")), "no byte of the outside file was read")
    }

    @Test func fifoIsRefused() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = try Self.makeRoot(sandbox)
        #expect(mkfifo(root + "/models/pipe", 0o644) == 0)
        Self.expectPackingRefused(root, reason: "FIFO")
    }

    @Test func escapingSymlinkIsRefused() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = try Self.makeRoot(sandbox)
        try PackingSandbox.symlink(root, "models/up", to: "../../elsewhere")
        Self.expectPackingRefused(root, reason: "outside")
    }

    @Test func absoluteSymlinkIsRefused() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = try Self.makeRoot(sandbox)
        try PackingSandbox.symlink(root, "abs", to: "/etc/hosts")
        Self.expectPackingRefused(root, reason: "absolute")
    }

    @Test func symlinkWithInnerDotDotIsRefused() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = try Self.makeRoot(sandbox)
        try PackingSandbox.symlink(root, "models/odd", to: "x/../weights.bin")
        Self.expectPackingRefused(root, reason: "\"..\"")
    }

    @Test func pathOver4096BytesIsRefused() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = try Self.makeRoot(sandbox)
        // 18 nested folders of 240 bytes, made relative to descriptors as the full path outgrows
        // PATH_MAX: the deepest relative path exceeds 4096 bytes. The system's own path limit may
        // refuse first (IOFailure); either way the packer reports an error instead of crashing.
        let name = String(repeating: "n", count: 240)
        var folder = open(root, O_RDONLY | O_DIRECTORY)
        for _ in 0..<18 {
            #expect(mkdirat(folder, name, 0o755) == 0)
            let next = openat(folder, name, O_RDONLY | O_DIRECTORY, 0)
            close(folder)
            folder = next
        }
        close(folder)
        #expect(performing: { _ = try PackedTree(root: root) }, throws: { error in
            if let refusal = error as? PackingError { return refusal.reason.contains("longer than 4096") }
            return (error as? IOFailure)?.code == ENAMETOOLONG
        })
        #expect(PackedTree.pathProblem(String(repeating: "a", count: 4097)) != nil)
        #expect(PackedTree.pathProblem(String(repeating: "a", count: 4096)) == nil)
    }

    #if os(Linux)
    @Test func nonUTF8NameIsRefused() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = try Self.makeRoot(sandbox)
        var name = Array((root + "/bad").utf8CString.dropLast())
        name += [CChar(bitPattern: 0xFF), 0]
        let descriptor = open(name, O_CREAT | O_WRONLY, 0o644)
        try #require(descriptor >= 0)
        close(descriptor)
        Self.expectPackingRefused(root, reason: "UTF-8")
    }
    #endif

    @Test func rootMustBeAFolder() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        let root = try Self.makeRoot(sandbox)
        Self.expectPackingRefused(root + "/models/weights.bin", reason: "not a folder")
    }

    @Test func removeTreeDoesNotFollowSymlinks() throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        try PackingSandbox.folder(sandbox.path, "keep")
        try PackingSandbox.file(sandbox.path, "keep/file", "kept")
        try PackingSandbox.folder(sandbox.path, "doomed/ro")
        try PackingSandbox.symlink(sandbox.path, "doomed/ro/link", to: "../../keep")
        try PackingSandbox.chmod(sandbox.sub("doomed/ro"), 0o555)
        try PackingSandbox.chmod(sandbox.sub("doomed"), 0o500)
        TreeUnpacker.removeTree(sandbox.sub("doomed"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.sub("doomed")))
        #expect(try String(contentsOfFile: sandbox.sub("keep/file"), encoding: .utf8) == "kept")
    }
}
