@testable import CofferFormat
import Foundation
import Testing
@testable import CofferServer

/// A valid container of tiny chunks has a header of any length (mostly its chunk table), read
/// whole whenever a deployment names the blob: the server refuses headers over 32 MiB, at upload
/// and when reading a stored blob.
@Suite struct StoredHeaderTests {
    /// A real version 2 container's first bytes, its fields patched to claim `chunks` chunks of one
    /// byte each (a header of `chunks × 36` bytes and more).
    static func claiming(_ chunks: UInt32) throws -> (bytes: [UInt8], preamble: ContainerHeader.Preamble) {
        var sealed = try SealedModel.seal(Array(repeating: 7, count: 1000), name: "m", using: .modelKey(ModelKey.generate(name: "k")))
        let count = withUnsafeBytes(of: chunks.bigEndian) { Array($0) }
        sealed.replaceSubrange(16..<24, with: [0, 0, 0, 0] + count)  // plaintext length
        sealed.replaceSubrange(56..<60, with: count)                 // chunk count
        return (sealed, try #require(try ContainerHeader.preamble(from: sealed)))
    }

    @Test("an upload whose header announces more than 32 MiB is refused from its first bytes")
    func upload() throws {
        let (huge, preamble) = try Self.claiming(1_000_000)
        #expect(preamble.headerLength > SealedModel.maximumHeaderLength)
        var check = UploadHeaderCheck(declaredSize: nil)
        #expect(throws: ContainerError.headerTooLong(length: preamble.headerLength, limit: SealedModel.maximumHeaderLength)) {
            try check.feed(huge.prefix(4096))
        }
        // Just under the limit is taken (its table is checked once stored).
        let (fits, _) = try Self.claiming(900_000)
        var accepted = UploadHeaderCheck(declaredSize: nil)
        try accepted.feed(fits.prefix(4096))
        #expect(accepted.header != nil)
    }

    @Test("a stored blob whose header is over the limit is refused before its table is read")
    func storedBlob() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-header-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try FolderBlobStore(root: root)
        let (huge, preamble) = try Self.claiming(1_000_000)
        let address = String(repeating: "ab", count: 32)
        let path = store.path(of: address)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // The real fields and first entry, then holes up to the claimed length (a sparse file).
        try Data(huge.prefix(preamble.chunkTableOffset + ChunkTable.entryLength)).write(to: URL(fileURLWithPath: path))
        #expect(truncate(path, off_t(preamble.sealedLength)) == 0)
        await #expect(throws: ContainerError.headerTooLong(length: preamble.headerLength, limit: SealedModel.maximumHeaderLength)) {
            _ = try await store.header(of: address)
        }
    }
}
