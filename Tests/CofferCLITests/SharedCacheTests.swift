@testable import Coffer
import Foundation
import Testing

/// Several clients of one process on one cache folder — an app that makes a new client when its
/// credential rotates, while entries of the old one are still open: no client's update, fallback
/// or `endAccessing` removes a model another client's accesses use.
@Suite("Clients sharing a cache folder")
struct SharedCacheTests {
    @Test("an update, endAccessing and a fallback through one client keep the models another client's entries use")
    func clientsKeepEachOthersModels() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let sha = fleet.flowers.sha
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder("shared-cache")
        let old = try CofferClient(configuration: fleet.configuration(cache))
        let spring = try await old.beginAccessing(identifier: "FlowerModels")
        let springClassifier = try #require(spring.entries["FlowerClassifier"])
        #expect(springClassifier.sha256 == sha["classifier"])

        // A new client on the same folder updates it to summer. Before, its update removed the
        // spring classifier, which only the old client's access used: opening the old entry then
        // failed ("its file is no longer on this device").
        try await fleet.deploy("summer", classifier: "classifier-large")
        let new = try CofferClient(configuration: fleet.configuration(cache))
        let summer = try await new.beginAccessing(identifier: "FlowerModels")
        #expect(summer.origin == .server && summer.entries["FlowerClassifier"]?.sha256 == sha["classifier-large"])
        #expect(SDKFleet.names(cache, "blobs").contains(sha["classifier"]! + ".coffer"))
        #expect(try await springClassifier.data() == fleet.plain["classifier"])

        // The new client's endAccessing ends its own accesses, not the old client's.
        await new.endAccessing(identifier: "FlowerModels")
        #expect(try await springClassifier.data() == fleet.plain["classifier"])

        // The old client takes summer too. The new client, with no access of its own, finds the
        // large classifier fails and falls back to spring: the failed version's models go, except
        // the one the old client's summer entry uses.
        let oldSummer = try await old.beginAccessing(identifier: "FlowerModels")
        let largeClassifier = try #require(oldSummer.entries["FlowerClassifier"])
        #expect(largeClassifier.sha256 == sha["classifier-large"])
        let failing = try #require(try new.cachedCollection(identifier: "FlowerModels")?.entries["FlowerClassifier"])
        let back = try #require(await failing.report(.failed(reason: "out of memory")))
        #expect(back.entries["FlowerClassifier"]?.sha256 == sha["classifier"])
        #expect(SDKFleet.names(cache, "blobs").contains(sha["classifier-large"]! + ".coffer"))
        #expect(try await largeClassifier.data() == fleet.plain["classifier-large"])

        // Once the old client's accesses end too, what the collection no longer names goes.
        await old.endAccessing(identifier: "FlowerModels")
        #expect(SDKFleet.names(cache, "blobs") == [sha["classifier"]! + ".coffer", sha["stylizer"]! + ".coffer"])
    }

    @Test("models in use are the process's, by folder: another spelling of the folder sees them, one client's end leaves another's, a client gone ends its own")
    func modelsInUseByFolder() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-in-use-\(UUID().uuidString)", isDirectory: true)
        let link = URL(fileURLWithPath: root.path + "-link", isDirectory: true)
        defer {
            try? FileManager.default.removeItem(at: link)
            try? FileManager.default.removeItem(at: root)
        }
        let cache = try CollectionCache(root: root, identifier: "FlowerModels")
        let other = try CollectionCache(root: root, identifier: "OtherModels")
        for folder in [cache.folder, other.folder] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: root)
        // The same folder through a link, and with a `..`.
        let spellings = try [CollectionCache(root: link, identifier: "FlowerModels"),
                             CollectionCache(root: root.appendingPathComponent("collections/..", isDirectory: true), identifier: "FlowerModels")]

        let first = ModelsInUse(), second = ModelsInUse()
        first.retain(["a"], in: cache)
        second.retain(["b"], in: spellings[0])
        for spelling in [cache] + spellings { #expect(ModelsInUse.models(in: spelling) == ["a", "b"], "\(spelling.folder)") }
        #expect(ModelsInUse.models(in: other).isEmpty)

        second.release("FlowerModels")
        #expect(ModelsInUse.models(in: cache) == ["a"])

        var third: ModelsInUse? = ModelsInUse()
        third?.retain(["c"], in: spellings[1])
        #expect(ModelsInUse.models(in: cache) == ["a", "c"])
        third = nil
        #expect(ModelsInUse.models(in: cache) == ["a"])

        first.release("FlowerModels")
        #expect(ModelsInUse.models(in: cache).isEmpty)
    }
}
