import Coffer
import CofferFormat
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

    @Test("a model that fails its checks when opened is reported failed and the collection falls back by itself")
    func fallBackWhenOpeningFails() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let sha = fleet.flowers.sha
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder("corrupt")
        let client = try CofferClient(configuration: fleet.configuration(cache))
        _ = try await client.beginAccessing(identifier: "FlowerModels")
        try await fleet.deploy("summer", classifier: "classifier-large")
        let summer = try await client.beginAccessing(identifier: "FlowerModels")
        let large = try #require(summer.entries["FlowerClassifier"])

        // One byte of a chunk flips on disk after the download was verified.
        let handle = try FileHandle(forUpdating: large.modelURL)
        try handle.seek(toOffset: 200_000)
        let byte = try #require(try handle.read(upToCount: 1)).first ?? 0
        try handle.seek(toOffset: 200_000)
        try handle.write(contentsOf: Data([byte ^ 0x01]))
        try handle.close()

        let updates = client.updates(identifier: "FlowerModels")
        await #expect(throws: (any Error).self) { try await large.data() }
        let announced = try #require(try await SDKFleet.within(60) {
            var iterator = updates.makeAsyncIterator()
            return await iterator.next()
        })
        #expect(announced.sequence == 1 && announced.fallback?.sha256 == sha["classifier-large"])
        #expect(try await announced.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        try await client.sendReports()
        let status = try await fleet.status("summer") { SDKFleet.outcomes($0)["failed"] == 1 }
        #expect(SDKFleet.outcomes(status)["failed"] == 1, "\(status)")
        let reasons = (status["topReasons"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
        #expect(reasons.count == 1 && !reasons[0].contains("/"), "\(reasons)")
    }
}
