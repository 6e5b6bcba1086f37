import CofferFormat
import Crypto
import Foundation
import Testing

/// `coffer blob download` against hosts that do not honour Range, and against hosts that send
/// more, or other, bytes than asked for: the download streams to disk in bounded memory, is
/// verified, and anything refused leaves nothing at the destination.
@Suite("Blob downloads stream, whatever the host does")
struct BlobStreamingTests {
    /// The CLI's peak RSS limit while it downloads a large blob from a host that ignores Range.
    static let peakLimit = 64 << 20

    /// The large blob's size: 256 MiB by default (four times the limit: a transport that holds
    /// the body fails), COFFER_TEST_STREAM_BLOB_MIB to measure another (docs/BENCHMARKS.md).
    static let largeSize: Int = {
        ProcessInfo.processInfo.environment["COFFER_TEST_STREAM_BLOB_MIB"].flatMap(Int.init).map { $0 << 20 } ?? 256 << 20
    }()

    /// Writes `size` bytes (one random mebibyte repeated) to `path`; returns their SHA-256.
    static func makeBlob(at path: String, size: Int) throws -> String {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let block = CLI.randomData(1 << 20)
        var hasher = SHA256()
        var left = size
        while left > 0 {
            let piece = block.prefix(min(left, block.count))
            hasher.update(data: piece)
            try handle.write(contentsOf: piece)
            left -= piece.count
        }
        return Hex.encode(hasher.finalize())
    }

    @Test("A large blob from a host that ignores Range: verified, under 64 MiB peak RSS")
    func largeBlobFromRangeIgnoringHost() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: MeasuredRun.time), "GNU time measures the peak RSS (apt-get install time)")
        let cli = CLI()
        defer { cli.cleanUp() }
        let address = try Self.makeBlob(at: cli.path("blob"), size: Self.largeSize)
        guard let host = await RangeIgnoringHost.start("ignore-range", serving: cli.path("blob")) else { return }
        defer { host.stop() }
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("COFFER_") { environment[name] = nil }
        environment["HOME"] = cli.folder.path
        let result = try await MeasuredRun.run(CLI.binary, ["blob", "download", address, "-o", cli.path("copy"), "--server", host.url, "--json"],
                                         environment: environment, outputIn: cli.folder)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("\"verified\":true") || result.stdout.contains("\"verified\" : true"), "\(result.stdout)")
        let size = (try? FileManager.default.attributesOfItem(atPath: cli.path("copy"))[.size] as? Int) ?? -1
        #expect(size == Self.largeSize)
        #expect(try Self.digest(of: cli.path("copy")) == address)
        print("coffer blob download of \(Self.largeSize >> 20) MiB from a host that ignores Range: peak RSS \(result.peakBytes >> 10) KiB")
        #expect(result.peakBytes < Self.peakLimit, "peak RSS \(result.peakBytes >> 20) MiB")
    }

    @Test("A range of a blob from a host that ignores Range: cut from the whole, which is verified")
    func rangeFromRangeIgnoringHost() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let address = try Self.makeBlob(at: cli.path("blob"), size: 20 << 20)
        guard let host = await RangeIgnoringHost.start("ignore-range", serving: cli.path("blob")) else { return }
        defer { host.stop() }
        let result = try await cli.run(["blob", "download", address, "-o", "part", "--range", "9000000-17000000", "--server", host.url],
                                 environment: ["COFFER_SERVER": ""], terminateAfter: 120)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let whole = try #require(cli.read("blob"))
        #expect(cli.read("part") == whole[9_000_000...17_000_000])
        // Written 0600 while unverified, then readable like any file made with this umask.
        let mask = umask(0)
        umask(mask)
        let mode = (try? FileManager.default.attributesOfItem(atPath: cli.path("part"))[.posixPermissions] as? Int) ?? -1
        #expect(mode == Int(0o644 & ~mask))
    }

    @Test("Endless, overlong and misplaced bodies are refused in one line; nothing is left at the destination",
          arguments: [
              ("endless", "more bytes than the blob's 1048576"),
              ("overlong", "more bytes than the blob's 1048576"),
              ("wrong-range", "not the bytes 0-1048575 asked for"),
              ("wrong-length", "a whole blob of 1048577 bytes, not 1048576"),
              ("short", "the answer ended after 524288 of 1048576 bytes"),
              // How much of a cut body the CLI read before the connection's end varies.
              ("cut", "the answer ended after "),
          ])
    func hostileBodies(mode: String, complaint: String) async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let address = try Self.makeBlob(at: cli.path("blob"), size: 1 << 20)
        guard let host = await RangeIgnoringHost.start(mode, serving: cli.path("blob")) else { return }
        defer { host.stop() }
        let secret = "cft_secret_" + UUID().uuidString
        let result = try await cli.run(["blob", "download", address, "-o", "out", "--server", host.url],
                                 environment: ["COFFER_TOKEN": secret], terminateAfter: 120)
        #expect(result.status == 76, "stderr: \(result.stderr)")
        let line = "coffer: unexpected answer from \(host.url) (\(complaint)"
        if mode == "cut" {
            #expect(result.stderr.hasPrefix(line) && result.stderr.hasSuffix(" of 1048576 bytes); is it a Coffer server?\n")
                    && result.stderr.filter { $0 == "\n" }.count == 1, "\(result.stderr)")
        } else {
            #expect(result.stderr == line + "); is it a Coffer server?\n")
        }
        #expect(!result.stderr.contains(secret))
        #expect(cli.listing() == ["blob"], "left behind: \(cli.listing())")
    }

    static func digest(of path: String) throws -> String {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var hasher = SHA256()
        while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty { hasher.update(data: piece) }
        return Hex.encode(hasher.finalize())
    }

    @Test("A JSON answer longer than 4 MiB is refused in one line, and the token is not in it")
    func endlessJSONAnswer() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try Data(count: 16).write(to: URL(fileURLWithPath: cli.path("blob")))
        guard let host = await RangeIgnoringHost.start("endless", serving: cli.path("blob")) else { return }
        defer { host.stop() }
        let secret = "cft_secret_" + UUID().uuidString
        let result = try await cli.run(["team", "list"], environment: ["COFFER_SERVER": host.url, "COFFER_TOKEN": secret], terminateAfter: 120)
        #expect(result.status == 76, "stderr: \(result.stderr)")
        #expect(result.stderr == "coffer: unexpected answer from \(host.url) (an answer longer than 4 MiB); is it a Coffer server?\n")
        #expect(!result.stderr.contains(secret) && !result.stdout.contains(secret))
    }
}
