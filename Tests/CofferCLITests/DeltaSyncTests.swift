@testable import Coffer
import CofferFormat
import Crypto
import Foundation
import Testing

/// Delta updates through `coffer sync` (and so the SDK) against a real server: a device that holds
/// version N of a model fetches only the chunks of N+1 it lacks, assembles N+1 beside N, checks
/// its SHA-256 against the signed manifest, and survives being killed at every step.
@Suite("Delta updates")
struct DeltaSyncTests {
    /// Version N of the classifier (`size` bytes of noise) and N+1: 40 KB rewritten at 60 %, and
    /// a few bytes inserted near the start, which shifts everything after them.
    static func versions(_ fleet: SDKFleet, size: Int = 8 << 20) async throws -> (Data, Data) {
        let base = CLI.randomData(size)
        var next = base
        let changed = size / 10 * 6
        next.replaceSubrange(changed..<changed + 40_000, with: CLI.randomData(40_000))
        next.insert(contentsOf: Data("metadata grew".utf8), at: 2_000)
        let cli = fleet.session.cli
        cli.write("n.bin", base)
        cli.write("n1.bin", next)
        // --force: a test that draws versions again replaces the last draw's containers.
        try await fleet.session.ok("encrypt", "n.bin", "--key", "flowers.modelkey", "--output", "n.coffer", "--quiet", "--force")
        try await fleet.session.ok("encrypt", "n1.bin", "--key", "flowers.modelkey", "--output", "n1.coffer", "--quiet", "--force")
        try await fleet.session.ok("encrypt", "n1.bin", "--key", "flowers.modelkey", "--output", "n1-v1.coffer", "--quiet",
                             "--format-version", "1", "--force")
        return (base, next)
    }

    /// Bytes the proxy sent back for blob requests, and how many such requests it saw.
    static func blobTraffic(_ proxy: TamperingProxy) -> (bytes: Int, requests: Int) {
        let blobs = proxy.takeLog().filter { $0.path.contains("/blobs/") }
        return (blobs.reduce(0) { $0 + $1.bytesOut }, blobs.count)
    }

    /// A container's header, parsed from its first bytes.
    static func header(_ container: Data) throws -> ContainerHeader {
        let preamble = try #require(try ContainerHeader.preamble(from: [UInt8](container.prefix(ContainerHeader.maximumLength))))
        return try ContainerHeader(parsing: [UInt8](container.prefix(preamble.headerLength)))
    }

    /// What a delta from the container `old` to `new` must download, read from their chunk tables
    /// alone: `new`'s header and every sealed chunk (with its tag) whose ID `old` lacks. The data
    /// and the model key are random in every run, so which chunks change is too; a bound on the
    /// traffic is exact only against this.
    static func mustTravel(from old: Data, to new: Data) throws -> (bytes: Int, chunks: Int, of: Int) {
        let held = Set(try #require(try header(old).chunkTable).entries.map(\.id))
        let wanted = try header(new)
        let table = try #require(wanted.chunkTable)
        let missing = table.entries.filter { !held.contains($0.id) }
        let bytes = missing.reduce(wanted.encodedLength) { $0 + Int($1.length) + ContainerHeader.tagLength }
        return (bytes, missing.count, table.count)
    }

    /// How many stretches of `new` a delta copies from `old`: runs of chunks whose IDs `old` has.
    static func copyRuns(from old: Data, to new: Data) throws -> Int {
        let held = Set(try #require(try header(old).chunkTable).entries.map(\.id))
        var runs = 0, previousShared = false
        for entry in try #require(try header(new).chunkTable).entries {
            let shared = held.contains(entry.id)
            if shared && !previousShared { runs += 1 }
            previousShared = shared
        }
        return runs
    }

    /// Checks that `bytes` (bodies and heads of `requests` answers) are what a delta must fetch: at
    /// least the missing chunks, at most those plus the 64 KiB probe for the header and a
    /// kilobyte of head per answer. And that the edit, two changed stretches, changed few chunks.
    static func expectDelta(_ bytes: Int, requests: Int, from old: Data, to new: Data,
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        let must = try mustTravel(from: old, to: new)
        // The insertion changes the first chunk, the rewrite one or two more; content-defined
        // boundaries find the old cuts again a chunk or two later (12 leaves room for rare slow resyncs).
        #expect(must.chunks >= 2 && must.chunks <= 12 && must.chunks * 2 < must.of,
                "\(must.chunks) of \(must.of) chunks changed", sourceLocation: sourceLocation)
        #expect(bytes >= must.bytes && bytes <= must.bytes + Int(BlobFetcher.headerProbe) + requests * 1024,
                "downloaded \(bytes) bytes in \(requests) requests; the missing chunks and header are \(must.bytes)",
                sourceLocation: sourceLocation)
    }

    @Test("N → N+1 downloads the changed chunks only and opens exactly N+1; a version 1 N+1 downloads whole")
    func deltaThroughCountingProxy() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let (_, next) = try await Self.versions(fleet)
        let cli = fleet.session.cli
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }

        try await fleet.deploy("n", classifier: "n")
        #expect(try await fleet.sync("edge").status == 0)
        try await fleet.deploy("n1", classifier: "n1")
        _ = proxy.takeLog()
        let synced = try await fleet.sync("edge", server: proxy.url)
        #expect(synced.status == 0, "\(synced.stderr)")
        let traffic = Self.blobTraffic(proxy)
        // Two changed stretches: a few chunks of 64 KiB–1 MiB each, and the header.
        try Self.expectDelta(traffic.bytes, requests: traffic.requests,
                             from: try #require(cli.read("n.coffer")), to: try #require(cli.read("n1.coffer")))
        #expect(traffic.requests <= 8, "\(traffic.requests) requests")
        let opened = try await cli.run("open", "--cache", "edge", "--collection", "FlowerModels", "FlowerClassifier", "--stdout")
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdoutBytes == next)

        // The same content sealed as version 1 shares nothing: the whole model travels.
        try await fleet.deploy("n1-v1", classifier: "n1-v1")
        _ = proxy.takeLog()
        #expect(try await fleet.sync("edge", server: proxy.url).status == 0)
        let whole = Self.blobTraffic(proxy)
        let wholeSize = try #require(cli.read("n1-v1.coffer")).count
        #expect(whole.bytes >= wholeSize)
        let reopened = try await cli.run("open", "--cache", "edge", "--collection", "FlowerModels", "FlowerClassifier", "--stdout")
        #expect(reopened.stdoutBytes == next)
    }

    @Test("a delta update is followed as it is assembled: the model opened while it downloads is exactly N+1")
    func deltaFollowedWhileAssembled() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let (base, next) = try await Self.versions(fleet)
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        let client = try CofferClient(configuration: fleet.configuration(fleet.folder("delta-follow"), server: proxy.url))
        try await fleet.deploy("n", classifier: "n")
        let (_, first) = try await client.beginAccessing(identifier: "FlowerModels", opening: "FlowerClassifier")
        #expect(first == base)
        try await fleet.deploy("n1", classifier: "n1")
        _ = proxy.takeLog()
        let (collection, _, sink) = try await client.beginAccessing(identifier: "FlowerModels", following: "FlowerClassifier") { length, _ in
            StreamingOpenTests.Collecting(count: Int(length))
        }
        #expect(collection.entries["FlowerClassifier"]?.sha256 == fleet.flowersSHA("n1.coffer"))
        let followed = try #require(sink as? StreamingOpenTests.Collecting, "the delta was not followed")
        #expect(followed.data == next)
        // It was a delta: the changed chunks travelled, not the model.
        let traffic = Self.blobTraffic(proxy)
        try Self.expectDelta(traffic.bytes, requests: traffic.requests,
                             from: try #require(fleet.session.cli.read("n.coffer")), to: try #require(fleet.session.cli.read("n1.coffer")))
    }

    @Test("a cached model whose bytes were damaged makes the delta fail its SHA-256; the model is then downloaded whole")
    func damagedCacheFallsBackToWhole() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let (_, next) = try await Self.versions(fleet)
        try await fleet.deploy("n", classifier: "n")
        #expect(try await fleet.sync("edge").status == 0)
        try Self.damageCachedN(fleet, cache: "edge")
        try await fleet.deploy("n1", classifier: "n1")
        let synced = try await fleet.sync("edge")
        #expect(synced.status == 0, "\(synced.stderr)")
        let opened = try await fleet.session.cli.run("open", "--cache", "edge", "--collection", "FlowerModels", "FlowerClassifier", "--stdout")
        #expect(opened.stdoutBytes == next)
    }

    /// Flips a byte in the middle of the cached N in `cache` (a chunk N+1 shares).
    static func damageCachedN(_ fleet: SDKFleet, cache: String) throws {
        let cached = fleet.folder(cache).path + "/collections/FlowerModels/blobs/" + fleet.flowersSHA("n.coffer") + ".coffer"
        let handle = try #require(FileHandle(forUpdatingAtPath: cached))
        try handle.seek(toOffset: 7_500_000)
        let byte = try #require(try handle.read(upToCount: 1))
        try handle.seek(toOffset: 7_500_000)
        try handle.write(contentsOf: Data([byte[0] ^ 0xFF]))
        try handle.close()
    }

    /// How a delta goes wrong in ``progressCountsWhatTravels(_:)``.
    enum Spoilt: String, CaseIterable, Sendable {
        /// The first missing run's Range is answered with the whole blob: the rest downloads whole.
        case rangeIgnored
        /// A cached chunk was damaged: the result fails its SHA-256 and the model downloads again.
        case cacheDamaged
    }

    @Test("a delta that falls back or is fetched again counts every byte that travels: its Progress ends at its total",
          arguments: Spoilt.allCases)
    func progressCountsWhatTravels(_ spoilt: Spoilt) async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let (_, next) = try await Self.versions(fleet)
        try await fleet.deploy("n", classifier: "n")
        #expect(try await fleet.sync("edge").status == 0)
        if spoilt == .cacheDamaged { try Self.damageCachedN(fleet, cache: "edge") }
        try await fleet.deploy("n1", classifier: "n1")
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        if spoilt == .rangeIgnored {
            // The header probe is the first blob request, the first missing run the second.
            let requests = Counter()
            proxy.setRequestRule { method, path in
                method == "GET" && path.hasPrefix("/v1/blobs/") && requests.next() == 1 ? ["range"] : []
            }
        }
        let client = try CofferClient(configuration: fleet.configuration(fleet.folder("edge"), server: proxy.url))
        let result = ResultBox()
        let progress = client.beginAccessing(identifier: "FlowerModels") { result.set($0) }
        let collection = try await SDKFleet.within(600) { () async throws -> ModelCollection in
            while result.get() == nil { try await Task.sleep(nanoseconds: 20_000_000) }
            return try result.get()!.get()
        }
        #expect(try await collection.entries["FlowerClassifier"]?.data() == next)
        let size = Int64(try #require(fleet.session.cli.read("n1.coffer")).count)
        // Without the bytes that travel after all, the total stays the delta's and is overrun.
        #expect(progress.completedUnitCount == progress.totalUnitCount,
                "completed \(progress.completedUnitCount) of \(progress.totalUnitCount)")
        #expect(progress.totalUnitCount >= size, "a total of \(progress.totalUnitCount) for a \(size)-byte model that travelled whole")
    }

    @Test("a part file an earlier try left full length but wrong (a page half written, no hole to show it) is fetched once more")
    func wrongResumedPartFetchedAgain() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let (_, next) = try await Self.versions(fleet)
        try await fleet.deploy("n", classifier: "n")
        #expect(try await fleet.sync("edge").status == 0)
        try await fleet.deploy("n1", classifier: "n1")
        // What a try killed while a downloaded run's last page was half written, beside a copied
        // run, leaves: every byte present but a few zeros where that run's tail belongs.
        var part = try #require(fleet.session.cli.read("n1.coffer"))
        part.replaceSubrange(5_000_000..<5_000_100, with: Data(count: 100))
        let staging = fleet.folder("edge").appendingPathComponent("collections/FlowerModels/staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        try part.write(to: staging.appendingPathComponent(fleet.flowersSHA("n1.coffer") + ".part"))
        let synced = try await fleet.sync("edge")
        #expect(synced.status == 0, "\(synced.stderr)")
        let opened = try await fleet.session.cli.run("open", "--cache", "edge", "--collection", "FlowerModels", "FlowerClassifier", "--stdout")
        #expect(opened.stdoutBytes == next)
    }

    /// The points of a delta update where a debug build kills itself.
    static let killPoints = ["delta-planned", "chunks-copied", "chunks-copied:2", "piece-written", "piece-written:2",
                             "piece-written:3", "blob-verified", "blob-committed", "state-written"]

    @Test("killed at every step of a delta update, the cache still opens N; the next sync finishes N+1")
    func killedMidDelta() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        // 2 MiB and 64 KiB pieces: every step is reached, and nine kills stay quick. The data and
        // the key are random, so where the chunks fall is too: versions are drawn again until the
        // rewrite leaves shared chunks after it (a second copy step to kill at).
        let cli = fleet.session.cli
        func draw() async throws -> (base: Data, next: Data, copyRuns: Int) {
            let (base, next) = try await Self.versions(fleet, size: 2 << 20)
            return (base, next, try Self.copyRuns(from: #require(cli.read("n.coffer")), to: #require(cli.read("n1.coffer"))))
        }
        var drawn = try await draw()
        for _ in 0..<8 where drawn.copyRuns < 2 { drawn = try await draw() }
        #expect(drawn.copyRuns >= 2, "eight draws without a second copy step")
        let (base, next) = (drawn.base, drawn.next)
        for point in Self.killPoints {
            let cache = "edge-" + point.replacingOccurrences(of: ":", with: "-")
            try await fleet.deploy("n-\(cache)", classifier: "n")
            #expect(try await fleet.sync(cache).status == 0)
            try await fleet.deploy("n1-\(cache)", classifier: "n1")
            let killed = try await fleet.sync(cache, environment: ["COFFER_TEST_KILL_AT": point, "COFFER_TEST_PIECE_BYTES": "65536"])
            #expect(killed.status == 9, "\(point): \(killed.status) \(killed.stderr)")
            let opened = try await cli.run("open", "--cache", cache, "--collection", "FlowerModels", "FlowerClassifier", "--stdout")
            #expect(opened.status == 0, "\(point): \(opened.stderr)")
            #expect(opened.stdoutBytes == base || (point == "state-written" && opened.stdoutBytes == next), "\(point)")
            let finished = try await fleet.sync(cache)
            #expect(finished.status == 0, "\(point): \(finished.stderr)")
            let reopened = try await cli.run("open", "--cache", cache, "--collection", "FlowerModels", "FlowerClassifier", "--stdout")
            #expect(reopened.stdoutBytes == next, "\(point)")
            #expect(SDKFleet.names(fleet.folder(cache), "staging").isEmpty, "\(point)")
        }
    }
}

extension SDKFleet {
    /// The SHA-256 of a file in the working folder.
    func flowersSHA(_ name: String) -> String {
        SHA256.hash(data: session.cli.read(name) ?? Data()).map { String(format: "%02x", $0) }.joined()
    }
}
