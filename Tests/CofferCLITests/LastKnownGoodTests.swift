import Coffer
import CofferFormat
import Crypto
import Foundation
import Testing

/// The SDK's last known good against a real server: after a model fails on the device the
/// collection serves the previous version, says so, refuses the failed model and adopts another.
@Suite("Coffer SDK last known good against a real server")
struct LastKnownGoodTests {
    struct OutOfMemory: Error {}

    /// A client of `fleet` with cache folder `name` (against `server`, default the real one) that
    /// synced deployment spring (the small classifier), then summer (`classifier`): the client,
    /// its cache and summer as the client got it.
    static func springThenSummer(_ fleet: SDKFleet, cache name: String, summer classifier: String,
                                 server: String? = nil) async throws -> (client: CofferClient, cache: URL, summer: ModelCollection) {
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder(name)
        let client = try CofferClient(configuration: fleet.configuration(cache, server: server))
        _ = try await client.beginAccessing(identifier: "FlowerModels")
        try await fleet.deploy("summer", classifier: classifier)
        return (client, cache, try await client.beginAccessing(identifier: "FlowerModels"))
    }

    /// Flips the byte at `offset` of the file at `url`, in place (damage after a verified download).
    static func flip(_ url: URL, at offset: UInt64) throws {
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        let byte = try #require(try handle.read(upToCount: 1)).first ?? 0
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data([byte ^ 0x01]))
    }

    @Test("after reportFailure the collection serves the previous models, the updates stream says so, the failed model is refused until another is named")
    func fallBackAfterReportFailure() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let sha = fleet.flowers.sha
        let (proxy, recorded) = try fleet.manifestRecordingProxy()
        defer { proxy.stop() }
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder("lkg")
        let client = try CofferClient(configuration: fleet.configuration(cache, server: proxy.url))
        let spring = try await client.beginAccessing(identifier: "FlowerModels")
        let springManifest = try #require(recorded.last)
        try await fleet.deploy("summer", classifier: "classifier-large")
        let summer = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(summer.sequence == 2 && summer.entries["FlowerClassifier"]?.sha256 == sha["classifier-large"])
        #expect(summer.fallback == nil)

        // The app finds the large classifier does not work here.
        let updates = client.updates(identifier: "FlowerModels")
        try #require(summer.entries["FlowerClassifier"]).reportFailure(OutOfMemory())
        let announced = try #require(try await SDKFleet.within(60) {
            var iterator = updates.makeAsyncIterator()
            return await iterator.next()
        })
        #expect(announced.sequence == 1 && announced.deploymentID == spring.deploymentID)
        #expect(announced.entries["FlowerClassifier"]?.sha256 == sha["classifier"])
        #expect(announced.fallback?.modelName == "FlowerClassifier")
        #expect(announced.fallback?.sha256 == sha["classifier-large"])
        #expect(announced.fallback?.deploymentID == summer.deploymentID && announced.fallback?.sequence == 2)
        #expect(announced.fallback?.reason == "OutOfMemory: OutOfMemory()")
        #expect(announced.origin.isStale { if case .lastKnownGood(name: "FlowerClassifier", _) = $0 { return true } else { return false } })
        #expect(try await announced.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        #expect(try fleet.cachedModels(cache) == ["FlowerClassifier": sha["classifier"]!, "FlowerStylizer": sha["stylizer"]!])

        // The server still names the failed model: not adopted, the last known good is served and the reason said.
        for round in 0..<2 {
            let again = try await client.beginAccessing(identifier: "FlowerModels")
            #expect(again.sequence == 1 && again.entries["FlowerClassifier"]?.sha256 == sha["classifier"])
            #expect(again.fallback?.sha256 == sha["classifier-large"])
            guard case .cache(.lastKnownGood("FlowerClassifier", let reason)?) = again.origin else {
                Issue.record("\(again.origin)")
                break
            }
            #expect(reason == "OutOfMemory: OutOfMemory()", "\(reason)")
            // A newer deployment (a new sequence) that still names it is refused too.
            if round == 0 { try await fleet.deploy("summer-again", classifier: "classifier-large") }
        }

        // Rollback protection keeps its floor: the sequence-1 manifest replayed is refused as older than 2.
        proxy.setRule { _, path, _, _, _ in path.contains("/manifest") ? .respond(springManifest) : .forward }
        let replayed = try await client.beginAccessing(identifier: "FlowerModels")
        guard case .cache(.manifestRefused(let refusal)?) = replayed.origin else { Issue.record("\(replayed.origin)"); return }
        #expect(refusal.contains("older than the cached"), "\(refusal)")
        proxy.setRule(SDKFleet.recordingManifests(into: recorded))

        // A deployment that names another classifier is adopted, and the record goes.
        try await fleet.deploy("autumn", classifier: "classifier")
        let autumn = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(autumn.origin == .server && autumn.fallback == nil, "\(autumn.origin)")
        #expect(autumn.sequence == 4 && autumn.entries["FlowerClassifier"]?.sha256 == sha["classifier"])
        #expect(!FileManager.default.fileExists(atPath: cache.path + "/collections/FlowerModels/failed.json"))
        // …so the large classifier may come back with a newer deployment.
        try await fleet.activate("summer")
        let back = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(back.origin == .server && back.entries["FlowerClassifier"]?.sha256 == sha["classifier-large"])
    }

    @Test("a published model that fails its checks when opened is reported failed and the collection falls back by itself")
    func fallBackWhenOpeningFails() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        // The team publishes a container one byte of whose chunks was damaged before the upload:
        // its SHA-256 is the one the manifest names, but it does not authenticate.
        var broken = try #require(fleet.session.cli.read("classifier-large.coffer"))
        broken[200_000] ^= 0x01
        fleet.session.cli.write("classifier-broken.coffer", broken)
        let brokenSHA = SHA256.hash(data: broken).map { String(format: "%02x", $0) }.joined()
        let (client, _, summer) = try await Self.springThenSummer(fleet, cache: "corrupt", summer: "classifier-broken")
        let large = try #require(summer.entries["FlowerClassifier"])
        #expect(large.sha256 == brokenSHA)

        let updates = client.updates(identifier: "FlowerModels")
        await #expect(throws: (any Error).self) { try await large.data() }
        let announced = try #require(try await SDKFleet.within(60) {
            var iterator = updates.makeAsyncIterator()
            return await iterator.next()
        })
        #expect(announced.sequence == 1 && announced.fallback?.sha256 == brokenSHA)
        #expect(try await announced.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        try await client.sendReports()
        let status = try await fleet.status("summer") { SDKFleet.outcomes($0)["failed"] == 1 }
        #expect(SDKFleet.outcomes(status)["failed"] == 1, "\(status)")
        let reasons = (status["topReasons"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
        #expect(reasons.count == 1 && !reasons[0].contains("/"), "\(reasons)")
    }

    @Test("a cached model damaged on the device is not reported failed: no fallback, the kept key stays, the other models open, the next update downloads it again",
          arguments: ["data", "withDecryptedFile"])
    func damagedFileIsDownloadedAgain(opening: String) async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        // Over 1 MiB, the largest chunk: at least two chunks, so damage to the first is found
        // only while decrypting (the reader checks the header and the last chunk when it opens).
        let plain = CLI.randomData(1_200_000)
        fleet.session.cli.write("classifier-chunked.bin", plain)
        try await fleet.session.ok("encrypt", "classifier-chunked.bin", "--key", "flowers.modelkey", "--output", "classifier-chunked.coffer", "--quiet")
        let sealedSHA = SHA256.hash(data: try #require(fleet.session.cli.read("classifier-chunked.coffer"))).map { String(format: "%02x", $0) }.joined()
        // Every key request the device makes, counted on its way to the server.
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        let keyRequests = Recorded()
        proxy.setRule { _, path, _, _, _ in
            if path.contains("/v1/device/keys/") { keyRequests.add(Data(path.utf8)) }
            return .forward
        }
        let (client, cache, summer) = try await Self.springThenSummer(fleet, cache: "damaged-" + opening, summer: "classifier-chunked", server: proxy.url)
        let large = try #require(summer.entries["FlowerClassifier"])
        #expect(try await large.data() == plain)
        #expect(keyRequests.count == 1)

        // The first chunk (found only while decrypting), the last chunk (found when the reader
        // opens), then the header's salt (the kept key no longer opens it).
        let header = try SealedModel.readHeader(path: large.modelURL.path)
        try #require(header.chunkCount >= 2)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: large.modelURL.path)[.size] as? Int)
        for offset: UInt64 in [UInt64(header.encodedLength) + 100, UInt64(size) - 100, 30] {
            try Self.flip(large.modelURL, at: offset)
            do {
                // withDecryptedFile (and Core ML's load, which goes through it) used to wrap the
                // chunk's failure before it was checked: nothing was marked.
                _ = opening == "data" ? try await large.data() : try await large.withDecryptedFile { try Data(contentsOf: $0) }
                Issue.record("a damaged file opened")
            } catch CofferError.modelInvalid(let name, let reason) {
                #expect(name == "FlowerClassifier" && reason.contains("damaged") && reason.contains("downloads it again"), "\(reason)")
            }
            // Marked for the next update; the file stays, so the collection's other models still open.
            let mark = cache.path + "/collections/FlowerModels/damaged/" + (large.sha256 ?? "")
            #expect(FileManager.default.fileExists(atPath: mark))
            #expect(try await summer.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])
            #expect(try client.cachedCollection(identifier: "FlowerModels")?.entries["FlowerStylizer"] != nil)
            // Offline, the collection is still served from the cache, and nothing is downloaded:
            // the mark waits for an update that reaches the server.
            let offline = try CofferClient(configuration: fleet.configuration(cache, server: "http://127.0.0.1:9", retries: 1))
            let served = try await offline.beginAccessing(identifier: "FlowerModels")
            #expect(served.sequence == summer.sequence && served.origin != .server, "\(served.origin)")
            #expect(try await served.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])
            #expect(FileManager.default.fileExists(atPath: mark))
            // The next access downloads it again, though the manifest is unchanged (a 304).
            let again = try await client.beginAccessing(identifier: "FlowerModels")
            #expect(!FileManager.default.fileExists(atPath: mark))
            #expect(again.origin == .server && again.fallback == nil, "\(again.origin)")
            #expect(again.sequence == summer.sequence && again.entries["FlowerClassifier"]?.sha256 == sealedSHA)
            #expect(try await again.entries["FlowerClassifier"]?.data() == plain)
        }
        // The key was kept throughout: never asked for again.
        #expect(keyRequests.count == 1)
        // Nothing was reported failed and the collection never fell back.
        try await client.sendReports()
        let status = try await fleet.status("summer") { SDKFleet.outcomes($0)["opened"] ?? 0 >= 1 }
        #expect(SDKFleet.outcomes(status)["opened"] ?? 0 >= 1 && (SDKFleet.outcomes(status)["failed"] ?? 0) == 0, "\(status)")
        #expect(!FileManager.default.fileExists(atPath: cache.path + "/collections/FlowerModels/failed.json"))
    }

    @Test("a damaged model the last known good shares is linked again from its new copy: the previous version keeps no damaged file")
    func damagedModelOfThePreviousVersion() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let sha = try #require(fleet.flowers.sha["stylizer"])
        // Spring and summer share the stylizer: the previous version links the same file.
        let (client, cache, summer) = try await Self.springThenSummer(fleet, cache: "damaged-previous", summer: "classifier-large")
        let folder = cache.path + "/collections/FlowerModels"
        let stylizer = try #require(summer.entries["FlowerStylizer"])
        #expect(try Self.inode(folder + "/previous/blobs/" + sha + ".coffer") == Self.inode(stylizer.modelURL.path))

        try Self.flip(stylizer.modelURL, at: 50_000)
        await PartialCacheTests.expectInvalid(stylizer, "FlowerStylizer", saying: "damaged")
        _ = try await client.beginAccessing(identifier: "FlowerModels")
        // The new copy is in blobs/ and the previous version's link points at it, not at the damaged file.
        let previous = folder + "/previous/blobs/" + sha + ".coffer"
        #expect(try Self.inode(previous) == Self.inode(stylizer.modelURL.path))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: previous))
        #expect(SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() == sha)
        #expect(try await stylizer.data() == fleet.plain["stylizer"])
    }

    /// The inode number of the file at `path`.
    static func inode(_ path: String) throws -> UInt64 {
        try #require((try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? NSNumber)?.uint64Value)
    }

    @Test("a model damaged while a fallback is in force is downloaded again from the manifest that named it, though the server's is refused")
    func damagedDuringFallback() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let sha = fleet.flowers.sha
        let (client, cache, summer) = try await Self.springThenSummer(fleet, cache: "damaged-fallback", summer: "classifier-large")
        let back = try #require(await summer.entries["FlowerClassifier"]?.report(.failed(reason: "out of memory")))
        let classifier = try #require(back.entries["FlowerClassifier"])
        #expect(classifier.sha256 == sha["classifier"])

        // The last known good's classifier is damaged on disk.
        try Self.flip(classifier.modelURL, at: 100_000)
        await PartialCacheTests.expectInvalid(classifier, "FlowerClassifier", saying: "damaged")
        // The server still names the failed model: its manifest is refused, and the damaged one is
        // downloaded again from the manifest of the version in force.
        let again = try await client.beginAccessing(identifier: "FlowerModels")
        guard case .cache(.lastKnownGood("FlowerClassifier", _)?) = again.origin else { Issue.record("\(again.origin)"); return }
        #expect(again.entries["FlowerClassifier"]?.sha256 == sha["classifier"])
        #expect(try await again.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        #expect(!FileManager.default.fileExists(atPath: cache.path + "/collections/FlowerModels/damaged/" + (sha["classifier"] ?? "")))
    }
}
