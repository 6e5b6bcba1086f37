@testable import Coffer
import CofferFormat
import Crypto
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The part file's writer: pieces of any size gathered into writes that are hashed on another
/// thread while the next one gathers; the hash must still cover every byte once, in order.
@Suite("Part writer")
struct PartWriterTests {
    static func answer(_ status: Int, first: UInt64, last: UInt64, total: UInt64) -> HTTPURLResponse {
        let fields = status == 206 ? ["Content-Range": "bytes \(first)-\(last)/\(total)"] : [:]
        return HTTPURLResponse(url: URL(string: "http://127.0.0.1/v1/blobs/x")!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)!
    }

    /// Piece sizes from one byte to several MiB (a seeded generator, so a failure can be replayed).
    static func sizes(total: Int, seed: UInt64) -> [Int] {
        var state = seed, left = total, sizes: [Int] = []
        while left > 0 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let pick = Int(state >> 33)
            let size = switch pick % 5 {
            case 0: 1 + pick % 17
            case 1: (5 << 20) / 2 + pick % 1000  // larger than a gathering buffer: written as it comes
            default: 1 + pick % (300 << 10)
            }
            sizes.append(min(size, left))
            left -= min(size, left)
        }
        return sizes
    }

    @Test("pieces of every size, across both gathering buffers and past them, hash to the SHA-256 of the bytes in order",
          arguments: [1, 2, 3] as [UInt64])
    func hashesInOrder(seed: UInt64) async throws {
        let dir = try DeltaAssemblyTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bytes = DeltaAssemblyTests.bytes(11 << 20 | 12_345, seed: seed)
        let total = UInt64(bytes.count)
        let path = dir.appendingPathComponent("model.part").path
        let writer = try PartWriter(path: path, expectedSize: total)
        let response = Self.answer(206, first: 0, last: total - 1, total: total)
        writer.beginPiece()
        var offset = 0
        // The last piece is small: it is still gathered when the hash is asked for.
        for size in Self.sizes(total: bytes.count - 1000, seed: seed) + [1000] {
            try writer.accept(Data(bytes[offset..<offset + size]), response: response, first: 0, last: total - 1, total: total)
            offset += size
        }
        #expect(writer.offset == total)
        // Asked before the last gathered bytes were written: they are hashed all the same.
        #expect(writer.finish() == SHA256.hash(data: bytes).hexString)
        try writer.synchronize()
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
    }

    @Test("a download resumed from a part file, and one a server restarts with 200, hash what the file holds")
    func resumedAndRestarted() async throws {
        let dir = try DeltaAssemblyTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bytes = DeltaAssemblyTests.bytes(5 << 20 | 77, seed: 9)
        let total = UInt64(bytes.count)
        let path = dir.appendingPathComponent("model.part").path
        let cut = 3 << 20 | 5
        try Data(bytes[..<cut]).write(to: URL(fileURLWithPath: path))

        let resumed = try PartWriter(path: path, expectedSize: total)
        #expect(resumed.offset == UInt64(cut))
        let rest = Self.answer(206, first: UInt64(cut), last: total - 1, total: total)
        resumed.beginPiece()
        try resumed.accept(Data(bytes[cut..<cut + 1000]), response: rest, first: UInt64(cut), last: total - 1, total: total)
        try resumed.accept(Data(bytes[(cut + 1000)...]), response: rest, first: UInt64(cut), last: total - 1, total: total)
        #expect(resumed.finish() == SHA256.hash(data: bytes).hexString)

        // Half of a piece gathered and hashed, then the next request's server ignores Range: the
        // hash starts again with the whole file.
        let restarted = try PartWriter(path: dir.appendingPathComponent("again.part").path, expectedSize: total)
        restarted.beginPiece()
        try restarted.accept(Data(bytes[..<(3 << 20)].map { $0 ^ 0xFF }), response: Self.answer(206, first: 0, last: total - 1, total: total),
                             first: 0, last: total - 1, total: total)
        restarted.beginPiece()
        let whole = Self.answer(200, first: 0, last: total - 1, total: total)
        for start in stride(from: 0, to: bytes.count, by: 700_000) {
            try restarted.accept(Data(bytes[start..<min(start + 700_000, bytes.count)]), response: whole, first: UInt64(cut), last: total - 1, total: total)
        }
        #expect(restarted.offset == total)
        #expect(restarted.finish() == SHA256.hash(data: bytes).hexString)
    }

    @Test("a link or a pipe where the part file goes is replaced by a new file, never followed or waited on; a folder is an error")
    func notAFileWhereThePartGoes() async throws {
        let dir = try DeltaAssemblyTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let outside = dir.appendingPathComponent("outside.bin")
        try Data("not the model".utf8).write(to: outside)
        let bytes = DeltaAssemblyTests.bytes(1 << 20 | 3, seed: 4)
        let total = UInt64(bytes.count)
        func download(into path: String) throws {
            let writer = try PartWriter(path: path, expectedSize: total)
            #expect(writer.offset == 0)
            writer.beginPiece()
            try writer.accept(Data(bytes), response: Self.answer(206, first: 0, last: total - 1, total: total),
                              first: 0, last: total - 1, total: total)
            #expect(writer.finish() == SHA256.hash(data: bytes).hexString)
            try writer.synchronize()
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect(attributes[.type] as? FileAttributeType == .typeRegular)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
        }
        // A link to a file elsewhere: the link goes, the file it names is untouched.
        let linked = dir.appendingPathComponent("linked.part").path
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: outside.path)
        try download(into: linked)
        #expect(try Data(contentsOf: outside) == Data("not the model".utf8))
        // A link to nothing.
        let dangling = dir.appendingPathComponent("dangling.part").path
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: dir.appendingPathComponent("missing").path)
        try download(into: dangling)
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("missing").path))
        // A pipe without a writer (a write to it would wait for ever).
        let pipe = dir.appendingPathComponent("pipe.part").path
        #expect(mkfifo(pipe, 0o600) == 0)
        try download(into: pipe)
        // A folder may hold something: not removed, an error.
        let folder = dir.appendingPathComponent("folder.part")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        #expect(throws: IOFailure.self) { _ = try PartWriter(path: folder.path, expectedSize: total) }
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder) && isFolder.boolValue)
    }

    @Test("a cached file checked again: intact, damaged, replaced since it failed, or unreadable")
    func fileDigest() throws {
        let dir = try DeltaAssemblyTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("model.coffer").path
        let bytes = DeltaAssemblyTests.bytes(3 << 20 | 11, seed: 5)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let sha = SHA256.hash(data: bytes).hexString
        let identity = try #require(FileIdentity(path: path))
        #expect(FileDigest.check(path: path, sha256: sha, identity: identity) == .intact)
        #expect(FileDigest.check(path: path, sha256: sha, identity: nil) == .intact)
        // One byte flipped in place: the same file, damaged.
        var damaged = bytes
        damaged[2 << 20] ^= 0x01
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 2 << 20)
        try handle.write(contentsOf: Data([damaged[2 << 20]]))
        try handle.close()
        #expect(FileDigest.check(path: path, sha256: sha, identity: identity) == .damaged)
        // A good copy renamed over it (an update's repair): not the file that failed.
        let fresh = dir.appendingPathComponent("fresh").path
        try Data(bytes).write(to: URL(fileURLWithPath: fresh))
        #expect(rename(fresh, path) == 0)
        #expect(FileDigest.check(path: path, sha256: sha, identity: identity) == .replaced)
        #expect(FileDigest.check(path: path, sha256: sha, identity: FileIdentity(path: path)) == .intact)
        // Gone: its bytes are unknown.
        #expect(unlink(path) == 0)
        #expect(FileDigest.check(path: path, sha256: sha, identity: identity) == .unreadable)
    }
}
