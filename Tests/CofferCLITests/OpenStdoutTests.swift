import CofferFormat
import Crypto
import Foundation
import Testing

/// `coffer open` of a cached model damaged past its first chunks. `--stdout` streamed the model
/// in order, authenticating each chunk only when it came to it: the chunks before the damaged one
/// were already written — plaintext wherever standard output went (a shell redirect makes that a
/// file with the umask's mode) — before it failed. Now it authenticates every chunk first.
/// `--output` wrote nothing, but failed with the container's bare error and left the damage
/// unmarked, so the next sync kept the damaged copy.
@Suite("coffer open of a damaged model")
struct OpenStdoutTests {
    @Test("a model damaged in a late chunk writes nothing (standard output, or PATH), fails, and is marked for the next sync",
          arguments: ["--stdout", "--output"])
    func damagedLateChunkWritesNothing(_ destination: String) async throws {
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
        let toFile = destination == "--output"
        let open = ["open", "--cache", "edge", "--collection", "FlowerModels", "FlowerClassifier"] + (toFile ? ["--output", "model.bin", "--force"] : ["--stdout"])
        /// What an open wrote: standard output, or the file it wrote (removed, for the next open).
        func opened(_ result: CLI.Result) -> Data {
            guard toFile else { return result.stdoutBytes }
            defer { try? FileManager.default.removeItem(atPath: session.cli.path("model.bin")) }
            return session.cli.read("model.bin") ?? Data()
        }
        let whole = try await session.cli.run(open)
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(opened(whole) == plain)

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
        #expect(damaged.status == 65, "\(damaged.stderr)")
        #expect(opened(damaged).isEmpty, "\(opened(damaged).count) bytes of plaintext written before the damage was found")
        #expect(!session.cli.listing().contains { $0.hasPrefix(".") || $0 == "model.bin" }, "\(session.cli.listing())")
        #expect(damaged.stderr.contains("damaged"), "\(damaged.stderr)")
        #expect(FileManager.default.fileExists(atPath: session.cli.path("edge/collections/FlowerModels/damaged/\(sha)")))
        // The next sync downloads it again, and it opens whole.
        #expect(try await fleet.sync("edge").status == 0)
        #expect(opened(try await session.cli.run(open)) == plain)
    }
}
