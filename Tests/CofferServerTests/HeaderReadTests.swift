@testable import CofferServer
import CofferFormat
import Foundation
import Testing

/// A stored header is read once, not once for every name, rule, deployment and view that names its
/// blob: an account of any team could otherwise make every page view read gigabytes.
@Suite("Header reads")
struct HeaderReadTests {
    @Test("deployments naming one blob under every name and rule read its header once, however often they are listed and shown")
    func oneReadPerBlob() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        // From before the first read (the upload's and the deployments' checks read the header too):
        // a lifetime that ends during the set-up allows one read more, which CI once saw.
        let started = Date()
        let flowers = try await Flowers.make(server)
        let store = try #require(server.app.blobStore)
        let address = try await flowers.upload("shared")
        let models = ["FlowerClassifier": address, "FlowerStylizer": address]
        let rules: [[String: Any]] = ["fr", "de", "it", "es", "nl"].map { ["condition": "language=\($0)", "models": models] }
        var ids: [String] = []
        for index in 0..<10 {
            let made = try await flowers.deployment("d\(index)", models: models, rules: rules)
            ids.append(try #require(made.id, "\(made.reply.text)"))
        }
        let browser = try await DashboardTests.ownerBrowser(server)
        for _ in 0..<3 {
            #expect(try await flowers.admin.call("GET", Flowers.base + "/deployments").status == 200)
            #expect(try await flowers.admin.call("GET", Flowers.base + "/deployments/\(ids[0])").status == 200)
            #expect(try await browser.get("/dashboard/teams/T/collections/FlowerModels").status == 200)
            #expect(try await browser.get("/dashboard/teams/T/collections/FlowerModels/models/FlowerClassifier").status == 200)
        }
        // Before: 2 names × 6 places × 10 deployments per list, every time (78 reads here). Now
        // once, and once more for every lifetime a loaded machine took over these requests.
        let lifetimes = Int(Date().timeIntervalSince(started) / HeaderFactsCache.lifetime)
        #expect(store.headerFacts.reads <= 2 + lifetimes, "\(store.headerFacts.reads) reads in \(lifetimes + 1) lifetimes")
    }

    @Test("only what was found is kept, and only for a while: a blob missing or damaged is looked at again")
    func keptForAWhile() async throws {
        let cache = HeaderFactsCache()
        let sealed = try SealedModel.seal(Array("m".utf8), name: "m", using: .modelKey(ModelKey.generate(name: "k")))
        let header = try SealedModel.readHeader(from: BytesSource(sealed))
        let now = Date()
        #expect(try await cache.facts(of: "a", now: now) { nil } == nil)
        #expect(try await cache.facts(of: "a", now: now) { (header, Int64(sealed.count)) }?.size == Int64(sealed.count))
        #expect(try await cache.facts(of: "a", now: now.addingTimeInterval(30)) { nil } != nil)
        #expect(try await cache.facts(of: "a", now: now.addingTimeInterval(HeaderFactsCache.lifetime + 1)) { nil } == nil)
        #expect(cache.reads == 3)
    }
}
