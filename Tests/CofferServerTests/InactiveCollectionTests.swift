@testable import CofferServer
import Crypto
import Fluent
import FluentSQLiteDriver
import Foundation
import Testing
import Vapor

/// Manifests of a collection that exists but has no active deployment. The compiled collection was
/// cached, "none active" was not: every manifest request of an app bound to such a collection (a
/// credential extracted from an app shipped before its first activation) was a database query,
/// without limit. Now "none active" is remembered for the cache's freshness, as a compiled one is.
@Suite("Manifests of a collection with no active deployment")
struct InactiveCollectionTests {
    @Test("no active deployment is asked of the database once per freshness, not per request; an activation elsewhere is seen after it")
    func inactiveIsRemembered() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let collection = try #require(try await CollectionRecord.query(on: server.app.db).filter(\.$identifier == "FlowerModels").first())
        let team = collection.$team.id
        let service = ManifestService(signer: ManifestSigner(privateKey: Curve25519.Signing.PrivateKey()), lifetime: 3600,
                                      publicURL: nil, freshness: 3)
        let device = try DeviceAttributes(queryString: "deviceID=device-1")
        // A database that cannot be opened: any query on it throws.
        let broken = try await Application.make(.testing)
        broken.databases.use(.sqlite(.file("/nonexistent-coffer-\(UUID().uuidString)/coffer.sqlite")), as: .sqlite)
        defer { Task { try? await broken.asyncShutdown() } }
        await #expect(throws: (any Error).self, "the broken database is asked") {
            _ = try await service.manifest(teamID: team, identifier: "Unknown", device: device, on: broken.db)
        }

        #expect(try await service.manifest(teamID: team, identifier: "FlowerModels", device: device, on: server.app.db) == nil)
        let started = Date()
        for _ in 0..<20 {
            #expect(try await service.manifest(teamID: team, identifier: "FlowerModels", device: device, on: broken.db) == nil,
                    "answered from memory")
        }
        // Activated through the server (another instance, for this service: nothing invalidates it).
        _ = try await flowers.activatedDeployment()
        if Date().timeIntervalSince(started) < 2.5 {
            #expect(try await service.manifest(teamID: team, identifier: "FlowerModels", device: device, on: broken.db) == nil,
                    "still remembered within the freshness")
        }
        try await Task.sleep(for: .milliseconds(3200))
        #expect(try await service.manifest(teamID: team, identifier: "FlowerModels", device: device, on: server.app.db) != nil,
                "the activation is seen once the freshness has passed")
    }
}
