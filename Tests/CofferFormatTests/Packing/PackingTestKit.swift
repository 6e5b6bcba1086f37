import Foundation
import Testing
@testable import CofferFormat

/// A scratch folder under the temporary directory, removed by `remove()`.
struct PackingSandbox {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("coffer-pack-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    func sub(_ name: String) -> String { path + "/" + name }

    func remove() { TreeUnpacker.removeTree(path) }

    /// Creates the folder `relative` (with its parents) inside `root`.
    static func folder(_ root: String, _ relative: String, mode: Int = 0o755) throws {
        let full = root + "/" + relative
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        try chmod(full, mode)
    }

    /// Writes `contents` to the file `relative` inside `root` and sets its mode.
    static func file(_ root: String, _ relative: String, _ contents: [UInt8], mode: Int = 0o644) throws {
        let full = root + "/" + relative
        try Data(contents).write(to: URL(fileURLWithPath: full))
        try chmod(full, mode)
    }

    static func file(_ root: String, _ relative: String, _ text: String, mode: Int = 0o644) throws {
        try file(root, relative, Array(text.utf8), mode: mode)
    }

    static func symlink(_ root: String, _ relative: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: root + "/" + relative, withDestinationPath: target)
    }

    static func chmod(_ path: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    /// Every entry under `root` (not following symlinks) as "kind mode contents-or-target", by path;
    /// the root itself under ".".
    static func snapshot(_ root: String) throws -> [String: String] {
        var result: [String: String] = [".": "d \(try mode(root))"]
        try walk(root, relative: "", into: &result)
        return result
    }

    private static func walk(_ folder: String, relative: String, into result: inout [String: String]) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            let full = folder + "/" + name
            let path = relative.isEmpty ? name : relative + "/" + name
            let type = try FileManager.default.attributesOfItem(atPath: full)[.type] as? FileAttributeType
            switch type {
            case .typeDirectory?:
                result[path] = "d \(try mode(full))"
                try walk(full, relative: path, into: &result)
            case .typeSymbolicLink?:
                result[path] = "l " + (try FileManager.default.destinationOfSymbolicLink(atPath: full))
            default:
                let data = try Data(contentsOf: URL(fileURLWithPath: full))
                let digest = data.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
                result[path] = "f \(try mode(full)) \(data.count) \(String(digest, radix: 16))"
            }
        }
    }

    /// `snapshot` as the unpacker restores it: folders and files keep only the owner's bits.
    static func ownerOnly(_ snapshot: [String: String]) -> [String: String] {
        snapshot.mapValues { item in
            var parts = item.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 2, parts[0] == "d" || parts[0] == "f", let mode = Int(parts[1], radix: 8) else { return item }
            parts[1] = String(mode & 0o700, radix: 8)
            return parts.joined(separator: " ")
        }
    }

    static func mode(_ path: String) throws -> String {
        let value = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! Int
        return String(value & 0o7777, radix: 8)
    }
}

/// Builds packed streams by hand, for refusal tests.
struct PackStream {
    var bytes: [UInt8] = []

    init(count: UInt32, rootMode: UInt16 = 0o755) {
        bytes = Array("COFTREE".utf8) + [1]
        u32(count)
        u16(rootMode)
    }

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }
    mutating func u32(_ value: UInt32) { for shift in [24, 16, 8, 0] { bytes.append(UInt8((value >> UInt32(shift)) & 0xFF)) } }
    mutating func u64(_ value: UInt64) { for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((value >> UInt64(shift)) & 0xFF)) } }

    /// kind, mode, path length and path.
    mutating func head(kind: UInt8, mode: UInt16, path: [UInt8]) {
        u8(kind)
        u16(mode)
        u16(UInt16(path.count))
        bytes += path
    }

    mutating func dir(_ path: String, mode: UInt16 = 0o755) { head(kind: 1, mode: mode, path: Array(path.utf8)) }

    mutating func file(_ path: String, _ contents: [UInt8] = [], mode: UInt16 = 0o644) {
        head(kind: 2, mode: mode, path: Array(path.utf8))
        u64(UInt64(contents.count))
        bytes += contents
    }

    mutating func symlink(_ path: String, to target: String) {
        head(kind: 3, mode: 0o777, path: Array(path.utf8))
        u16(UInt16(target.utf8.count))
        bytes += Array(target.utf8)
    }
}

enum PackingTestKit {
    /// Feeds `stream` to a new unpacker in pieces of `piece` bytes, then finishes.
    static func unpack(_ stream: [UInt8], into destination: String, piece: Int = Int.max, expectedLength: UInt64? = nil) throws {
        let unpacker = try TreeUnpacker(destination: destination, expectedLength: expectedLength)
        var start = 0
        while start < stream.count {
            let end = start + min(piece, stream.count - start)
            try stream[start..<end].withUnsafeBytes { try unpacker.consume($0) }
            start = end
        }
        try unpacker.finish()
    }

    /// The whole packed stream of `tree`, read in one call.
    static func fullRead(_ tree: PackedTree) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int(tree.length))
        try bytes.withUnsafeMutableBytes { try tree.read(into: $0, at: 0) }
        return bytes
    }

    /// True when `error` is `ContainerError.malformedTree`.
    static func isMalformedTree(_ error: any Error) -> Bool {
        if case ContainerError.malformedTree = error { return true }
        return false
    }

    /// Unpacks `stream` into a fresh sandbox that also holds a folder "outside"; expects
    /// `malformedTree` and checks nothing outside the destination changed.
    static func expectRefused(_ stream: [UInt8], piece: Int = Int.max, expectedLength: UInt64? = nil,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let sandbox = try PackingSandbox()
        defer { sandbox.remove() }
        try PackingSandbox.folder(sandbox.path, "outside")
        try PackingSandbox.file(sandbox.path, "outside/keep.txt", "keep")
        let before = try PackingSandbox.snapshot(sandbox.sub("outside"))
        var thrown: (any Error)?
        do {
            try unpack(stream, into: sandbox.sub("out"), piece: piece, expectedLength: expectedLength)
        } catch {
            thrown = error
        }
        #expect(thrown.map(isMalformedTree) == true, "expected malformedTree, got \(String(describing: thrown))",
                sourceLocation: sourceLocation)
        let names = try FileManager.default.contentsOfDirectory(atPath: sandbox.path).sorted()
        #expect(names == ["out", "outside"], sourceLocation: sourceLocation)
        #expect(try PackingSandbox.snapshot(sandbox.sub("outside")) == before, sourceLocation: sourceLocation)
    }
}
