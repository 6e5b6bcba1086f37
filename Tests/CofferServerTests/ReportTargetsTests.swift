import Foundation
import Testing

@testable import CofferServer

/// The report route's cache of deployments (``ReportTargets``): made-up deployment IDs, which any
/// app credential can send, must not push the teams' real deployments out of it.
@Suite("Report targets cache")
struct ReportTargetsTests {
    @Test("a flood of made-up deployment IDs evicts only other unknowns; the activated deployment stays cached")
    func madeUpIDsDoNotEvictRealOnes() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let id = try #require(UUID(uuidString: try await flowers.activatedDeployment()))

        let targets = ReportTargets(capacity: 8)
        let db = server.app.db
        #expect(try await targets.target(id, on: db)?.collection == "FlowerModels")
        for _ in 0..<50 {
            #expect(try await targets.target(UUID(), on: db) == nil)
        }
        #expect(targets.cachedTarget(id)?.collection == "FlowerModels", "the real deployment was evicted by made-up ones")
    }
}
