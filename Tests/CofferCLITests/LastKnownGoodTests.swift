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
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder("corrupt")
        let client = try CofferClient(configuration: fleet.configuration(cache))
        _ = try await client.beginAccessing(identifier: "FlowerModels")
        try await fleet.deploy("summer", classifier: "classifier-broken")
        let summer = try await client.beginAccessing(identifier: "FlowerModels")
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

    @Test("a cached model damaged on the device is not reported failed: no fallback, the kept key stays, the other models open, the next update downloads it again")
    func damagedFileIsDownloadedAgain() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let sha = fleet.flowers.sha
        // Every key request the device makes, counted on its way to the server.
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        let keyRequests = Recorded()
        proxy.setRule { _, path, _, _, _ in
            if path.contains("/v1/device/keys/") { keyRequests.add(Data(path.utf8)) }
            return .forward
        }
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder("damaged")
        let client = try CofferClient(configuration: fleet.configuration(cache, server: proxy.url))
        _ = try await client.beginAccessing(identifier: "FlowerModels")
        try await fleet.deploy("summer", classifier: "classifier-large")
        let summer = try await client.beginAccessing(identifier: "FlowerModels")
        let large = try #require(summer.entries["FlowerClassifier"])
        #expect(try await large.data() == fleet.plain["classifier-large"])
        #expect(keyRequests.count == 1)

        // Flips one byte of the cached file, after its download was verified and opened once.
        func damage(at offset: UInt64) throws {
            let handle = try FileHandle(forUpdating: large.modelURL)
            try handle.seek(toOffset: offset)
            let byte = try #require(try handle.read(upToCount: 1)).first ?? 0
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: Data([byte ^ 0x01]))
            try handle.close()
        }
        // A chunk (found while decrypting), then the header's salt (the kept key no longer opens it).
        for offset: UInt64 in [200_000, 30] {
            try damage(at: offset)
            do {
                _ = try await large.data()
                Issue.record("a damaged file opened")
            } catch CofferError.modelInvalid(let name, let reason) {
                #expect(name == "FlowerClassifier" && reason.contains("damaged") && reason.contains("downloads it again"), "\(reason)")
            }
            // Marked for the next update; the file stays, so the collection's other models still open.
            let mark = cache.path + "/collections/FlowerModels/damaged/" + (large.sha256 ?? "")
            #expect(FileManager.default.fileExists(atPath: mark))
            #expect(try await summer.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])
            // The next access downloads it again, though the manifest is unchanged (a 304).
            let again = try await client.beginAccessing(identifier: "FlowerModels")
            #expect(!FileManager.default.fileExists(atPath: mark))
            #expect(again.origin == .server && again.fallback == nil, "\(again.origin)")
            #expect(again.sequence == summer.sequence && again.entries["FlowerClassifier"]?.sha256 == sha["classifier-large"])
            #expect(try await again.entries["FlowerClassifier"]?.data() == fleet.plain["classifier-large"])
        }
        // The key was kept throughout: never asked for again.
        #expect(keyRequests.count == 1)
        // Nothing was reported failed and the collection never fell back.
        try await client.sendReports()
        let status = try await fleet.status("summer") { SDKFleet.outcomes($0)["opened"] ?? 0 >= 1 }
        #expect(SDKFleet.outcomes(status)["opened"] ?? 0 >= 1 && (SDKFleet.outcomes(status)["failed"] ?? 0) == 0, "\(status)")
        #expect(!FileManager.default.fileExists(atPath: cache.path + "/collections/FlowerModels/failed.json"))
    }
}
