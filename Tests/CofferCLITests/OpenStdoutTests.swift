import CofferFormat
import Crypto
import Foundation
import Testing

/// `coffer open --stdout` of a cached model damaged past its first chunks. It streamed the model
/// in order, authenticating each chunk only when it came to it: the chunks before the damaged one
/// were already written — plaintext wherever standard output went (a shell redirect makes that a
/// file with the umask's mode) — before it failed. Now it authenticates every chunk first.
@Suite("coffer open --stdout of a damaged model")
struct OpenStdoutTests {
    @Test("a model damaged in a late chunk writes nothing to standard output, fails, and is marked for the next sync")
    func damagedLateChunkWritesNothing() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let session = fleet.session
        // Large enough for many chunks: the stream decrypts a few at a time and writes each batch.
        let plain = CLI.randomData(24 << 20)
        session.cli.write("classifier-huge.bin", plain)
        try await session.ok("encrypt", "classifier-huge.bin", "--key", "flowers.modelkey", "--output", "classifier-huge.coffer", "--quiet")
        let sealed = try #require(session.cli.read("classifier-huge.coffer"))
        let sha = SHA256.hash(data: sealed).map { String(format: "%02x", $0) }.joined()
        try await fleet.deploy("huge", classifier: "classifier-huge")
        #expect(try await fleet.sync("edge").status == 0)
        let open = ["open", "--cache", "edge", "--collection", "FlowerModels", "FlowerClassifier", "--stdout"]
        let whole = try await session.cli.run(open)
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(whole.stdoutBytes == plain)

        // One bit of the next-to-last chunk's ciphertext.
        let blob = session.cli.path("edge/collections/FlowerModels/blobs/\(sha).coffer")
        let header = try SealedModel.readHeader(path: blob)
        #expect(header.chunkCount >= 8, "\(header.chunkCount) chunks: too few for the stream to write before the damage")
        let offset = header.sealedOffset(ofChunk: header.chunkCount - 2) + 10
        let handle = try #require(FileHandle(forUpdatingAtPath: blob))
        try handle.seek(toOffset: offset)
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data([byte ^ 0x01]))
        try handle.close()

        let damaged = try await session.cli.run(open)
        #expect(damaged.status != 0)
        #expect(damaged.stdoutBytes.isEmpty, "\(damaged.stdoutBytes.count) bytes of plaintext written before the damage was found")
        #expect(damaged.stderr.contains("damaged"), "\(damaged.stderr)")
        #expect(FileManager.default.fileExists(atPath: session.cli.path("edge/collections/FlowerModels/damaged/\(sha)")))
        // The next sync downloads it again, and it opens whole.
        #expect(try await fleet.sync("edge").status == 0)
        #expect(try await session.cli.run(open).stdoutBytes == plain)
    }
}
