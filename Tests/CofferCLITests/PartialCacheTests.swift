import Coffer
import Crypto
import Foundation
import Testing

/// A cached version some of whose model files have gone (the system purging a cache folder, a
/// cleaner, a disk) or changed in size, against a real server: the other models keep being served,
/// offline too, and the next update that reaches the server downloads the missing ones again.
@Suite("Coffer SDK cache with a model file gone")
struct PartialCacheTests {
    static let unreachable = "http://127.0.0.1:9"

    /// A client of `fleet` with cache folder `name` that synced deployment spring and opened both
    /// models once (their keys are kept for offline opens): the client, its cache and spring.
    static func synced(_ fleet: SDKFleet, cache name: String, server: String? = nil) async throws
        -> (client: CofferClient, cache: URL, spring: ModelCollection)
    {
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder(name)
        let client = try CofferClient(configuration: fleet.configuration(cache, server: server))
        let spring = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(try await spring.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        #expect(try await spring.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])
        return (client, cache, spring)
    }

    /// Expects `entry` to throw `modelInvalid` for `name` with a reason containing `words`.
    static func expectInvalid(_ entry: ModelCollection.Entry?, _ name: String, saying words: String) async {
        await #expect {
            _ = try await entry?.data()
        } throws: { error in
            guard case .modelInvalid(let model, let reason) = error as? CofferError else { return false }
            return model == name && reason.contains(words)
        }
    }

    @Test("a removed model file: the other model is served offline, its failure is not reported; on a 304 it is downloaded again, a failed try keeps the cache serving")
    func removedModelFile() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        // The status of every manifest answer, and blob downloads refused while `refuseBlobs` holds.
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        let manifests = Recorded()
        func forward(refusingBlobs: Bool) {
            proxy.setRule { _, path, _, status, _ in
                if path.contains("/manifest") { manifests.add(Data(String(status).utf8)) }
                return refusingBlobs && path.contains("/blobs/") ? .status(503) : .forward
            }
        }
        forward(refusingBlobs: false)
        let (client, cache, spring) = try await Self.synced(fleet, cache: "removed", server: proxy.url)
        let classifier = try #require(spring.entries["FlowerClassifier"])
        try FileManager.default.removeItem(at: classifier.modelURL)

        var offline = try CofferClient(configuration: fleet.configuration(cache, server: Self.unreachable, retries: 1))
        var missing: ModelCollection.Entry?
        for policy in [UpdatePolicy.waitForLatest, .cachedOnly] {
            offline = try CofferClient(configuration: fleet.configuration(cache, server: Self.unreachable, policy: policy, retries: 1))
            let served = try await offline.beginAccessing(identifier: "FlowerModels")
            missing = served.entries["FlowerClassifier"]
            #expect(served.sequence == spring.sequence && served.origin != .server, "\(served.origin)")
            #expect(try await served.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])
            await Self.expectInvalid(served.entries["FlowerClassifier"], "FlowerClassifier", saying: "no longer on this device")
            // The app reports what it caught: a file gone from this device says nothing about the model.
            #expect(await served.entries["FlowerClassifier"]?.report(.failed(reason: "it did not open")) == nil)
            await #expect {
                try await offline.report(.failed(reason: "it did not open"), for: try #require(served.entries["FlowerClassifier"]))
            } throws: { error in
                guard case .notReportable(let reason) = error as? ReportError else { return false }
                return reason.contains("gone or damaged")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: cache.path + "/collections/FlowerModels/failed.json"))
        #expect(try client.cachedCollection(identifier: "FlowerModels")?.entries["FlowerStylizer"] != nil)
        #expect(!FileManager.default.fileExists(atPath: classifier.modelURL.path))

        // Online, the manifest unchanged (a 304 to the cached ETag), but the model cannot be had:
        // the update fails with that cause, and the cache serves what it has.
        #expect(manifests.count == 1)
        forward(refusingBlobs: true)
        let refused = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(refused.origin.isStale { if case .server(503, _, _) = $0 { return true } else { return false } }, "\(refused.origin)")
        #expect(try await refused.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])
        // Then the missing model is downloaded again from the manifest that named it, on a 304.
        forward(refusingBlobs: false)
        let again = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(again.origin == .server && again.sequence == spring.sequence, "\(again.origin)")
        #expect(manifests.statuses == ["200", "304", "304"])
        #expect(try await again.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        #expect(try await spring.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])

        // The offline client's app reports what it caught only now, the file good again: still
        // the device's failure, not the model's.
        let late = try #require(missing)
        #expect(await late.report(.failed(reason: "it did not open")) == nil)
        await #expect {
            try await offline.report(.failed(reason: "it did not open"), for: late)
        } throws: { error in
            guard case .notReportable = error as? ReportError else { return false }
            return true
        }
        #expect(!FileManager.default.fileExists(atPath: cache.path + "/collections/FlowerModels/failed.json"))
    }

    @Test("a model file of another size: marked damaged when opened, the other model served offline, downloaded again by the next access")
    func truncatedModelFile() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let (client, cache, spring) = try await Self.synced(fleet, cache: "truncated")
        let stylizer = try #require(spring.entries["FlowerStylizer"])
        let handle = try FileHandle(forUpdating: stylizer.modelURL)
        try handle.truncate(atOffset: stylizer.size - 1000)
        try handle.close()

        let offline = try CofferClient(configuration: fleet.configuration(cache, server: Self.unreachable, retries: 1))
        let served = try await offline.beginAccessing(identifier: "FlowerModels")
        #expect(served.sequence == spring.sequence && served.origin.isOfflineFallback, "\(served.origin)")
        #expect(try await served.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        await Self.expectInvalid(served.entries["FlowerStylizer"], "FlowerStylizer", saying: "damaged")
        let mark = cache.path + "/collections/FlowerModels/damaged/" + (stylizer.sha256 ?? "")
        #expect(FileManager.default.fileExists(atPath: mark))
        // The app reports what it caught: nothing is sent and nothing falls back.
        #expect(await served.entries["FlowerStylizer"]?.report(.failed(reason: "it did not open")) == nil)

        let again = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(again.origin == .server, "\(again.origin)")
        #expect(try await again.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])
        #expect(!FileManager.default.fileExists(atPath: mark))
        // Nothing was reported failed: the file, not the model, was to blame.
        #expect(!FileManager.default.fileExists(atPath: cache.path + "/collections/FlowerModels/failed.json"))
    }

    @Test("an update from an incomplete version keeps no last known good, rather than the older one it replaced", arguments: [false, true])
    func incompleteVersionIsNotKept(everyModelGone: Bool) async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let (client, cache, summer) = try await LastKnownGoodTests.springThenSummer(fleet, cache: "incomplete-previous", summer: "classifier-large")
        let previousState = cache.path + "/collections/FlowerModels/previous/state.json"
        #expect(FileManager.default.fileExists(atPath: previousState))
        // Summer's own classifier (not spring's) loses its end on the disk, or all of summer's
        // files go; then autumn comes.
        let large = try #require(summer.entries["FlowerClassifier"])
        if everyModelGone {
            for entry in summer.entries.values { try FileManager.default.removeItem(at: entry.modelURL) }
        } else {
            let handle = try FileHandle(forUpdating: large.modelURL)
            try handle.truncate(atOffset: large.size / 2)
            try handle.close()
        }
        try await fleet.deploy("autumn", classifier: "classifier")
        let autumn = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(autumn.origin == .server && autumn.sequence == summer.sequence.map { $0 + 1 }, "\(autumn.origin)")
        #expect(try await autumn.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        #expect(!FileManager.default.fileExists(atPath: previousState))
    }

    @Test("a resized model the last known good shares is downloaded again and the previous version's link follows it, unopened")
    func resizedModelOfThePreviousVersion() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let sha = try #require(fleet.flowers.sha["stylizer"])
        let (client, cache, summer) = try await LastKnownGoodTests.springThenSummer(fleet, cache: "resized-previous", summer: "classifier-large")
        let stylizer = try #require(summer.entries["FlowerStylizer"])
        // In place: the previous version's hard link is the same file.
        let handle = try FileHandle(forUpdating: stylizer.modelURL)
        try handle.truncate(atOffset: stylizer.size - 1)
        try handle.close()
        _ = try await client.beginAccessing(identifier: "FlowerModels")
        let previous = cache.path + "/collections/FlowerModels/previous/blobs/" + sha + ".coffer"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: previous))
        #expect(SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() == sha)
        #expect(try await stylizer.data() == fleet.plain["stylizer"])
    }

    @Test("a fallback puts the previous version's copy in place of a resized file in blobs/")
    func fallbackReplacesResizedFile() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let (_, _, summer) = try await LastKnownGoodTests.springThenSummer(fleet, cache: "fallback-resized", summer: "classifier-large")
        // blobs/ gets another, shorter file for the stylizer (the previous version keeps its link).
        let stylizer = try #require(summer.entries["FlowerStylizer"])
        let sealed = try Data(contentsOf: stylizer.modelURL)
        try FileManager.default.removeItem(at: stylizer.modelURL)
        try sealed.prefix(sealed.count - 10).write(to: stylizer.modelURL)
        let back = try #require(await summer.entries["FlowerClassifier"]?.report(.failed(reason: "out of memory")))
        #expect(back.entries["FlowerClassifier"]?.sha256 == fleet.flowers.sha["classifier"])
        #expect(try await back.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])
        #expect(try await back.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
    }

    @Test("offline with bundled models, an incomplete version gives way to the bundled set; a version with no model left is not served")
    func incompleteVersionAndBundledModels() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let (_, cache, spring) = try await Self.synced(fleet, cache: "bundled")
        let stylizer = try #require(spring.entries["FlowerStylizer"])
        try FileManager.default.removeItem(at: stylizer.modelURL)

        let bundledPlain = CLI.randomData(5000)
        fleet.session.cli.write("bundled.bin", bundledPlain)
        var configuration = try fleet.configuration(cache, server: Self.unreachable, retries: 1)
        configuration.bundledModels = ["FlowerClassifier": BundledModel(url: URL(fileURLWithPath: fleet.session.cli.path("bundled.bin")), version: "1.0")]
        let bundled = try await CofferClient(configuration: configuration).beginAccessing(identifier: "FlowerModels")
        guard case .bundled = bundled.origin else { Issue.record("\(bundled.origin)"); return }
        #expect(try await bundled.entries["FlowerClassifier"]?.data() == bundledPlain)
        #expect(bundled.entries["FlowerStylizer"] == nil)
        // Cache only: the bundled set too, saying why.
        configuration.updatePolicy = .cachedOnly
        let cacheOnly = try await CofferClient(configuration: configuration).beginAccessing(identifier: "FlowerModels")
        guard case .bundled(because: .cache(let reason)) = cacheOnly.origin else { Issue.record("\(cacheOnly.origin)"); return }
        #expect(reason.contains("missing"))

        // Every model gone: nothing of that version is served (nothing bundled: unavailable).
        try FileManager.default.removeItem(at: try #require(spring.entries["FlowerClassifier"]).modelURL)
        await #expect {
            _ = try await CofferClient(configuration: fleet.configuration(cache, server: Self.unreachable, retries: 1))
                .beginAccessing(identifier: "FlowerModels")
        } throws: { error in
            guard case .collectionUnavailable(_, .offline) = error as? CofferError else { return false }
            return true
        }
    }
}
