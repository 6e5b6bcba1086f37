import CofferFormat
import Crypto
import Foundation
import Testing

/// Which keys an app bound to a collection gets over time: a key stays deliverable once a
/// deployment using it was activated, even after a later deployment replaced it (devices may still
/// run the models it opens); a key that only a draft uses is not.
@Suite("Key scope")
struct KeyScopeTests {
    static func usedAfterActivation(_ backend: Backend) async throws {
        // Stopped before returning (not from a deferred task), so its PostgreSQL database is dropped.
        let server = try await TestServer.start(postgres: backend.isPostgres)
        do {
            try await usedAfterActivation(on: server)
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }

    static func usedAfterActivation(on server: TestServer) async throws {
        let flowers = try await Flowers.make(server)
        let first = flowers.key
        let second = try await flowers.world.key(in: "T", name: "second")
        let drafted = try await flowers.world.key(in: "T", name: "drafted")
        let device = Device()

        let one = try await flowers.upload("one", key: first)
        let deployment1 = try #require(try await flowers.deployment("one", models: ["FlowerClassifier": one, "FlowerStylizer": one]).id)
        #expect(try await flowers.activate(deployment1).status == 200)
        let two = try await flowers.upload("two", key: second)
        let deployment2 = try #require(try await flowers.deployment("two", models: ["FlowerClassifier": two, "FlowerStylizer": two]).id)
        // Not before its deployment is activated.
        #expect(try await device.request(second.id, app: flowers.app, on: server).errorCode == "not_in_app_collections")
        #expect(try await flowers.activate(deployment2).status == 200)
        let replaced = try await flowers.admin.call("GET", Flowers.base + "/deployments/\(deployment1)")
        #expect(replaced.object["status"] as? String == "archived", "\(replaced.text)")

        for key in [first, second] {
            let delivered = try await device.request(key.id, app: flowers.app, on: server)
            #expect(delivered.status == 200, "\(delivered.text)")
            guard delivered.status == 200 else { continue }
            let opened = try device.open(delivered, keyID: key.id) == key.key
            #expect(opened)
        }

        // A draft of the same collection that uses a third key does not make that key deliverable.
        let three = try await flowers.upload("three", key: drafted)
        #expect(try await flowers.deployment("three", models: ["FlowerClassifier": three, "FlowerStylizer": three]).id != nil)
        let refused = try await device.request(drafted.id, app: flowers.app, on: server)
        #expect(refused.status == 403)
        #expect(refused.errorCode == "not_in_app_collections")
    }

    @Test("a key used by a replaced deployment is still delivered to an app bound to its collection; a draft's key is refused (SQLite)")
    func usedAfterActivationSQLite() async throws { try await Self.usedAfterActivation(.sqlite) }

    @Test("a key used by a replaced deployment is still delivered to an app bound to its collection; a draft's key is refused (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func usedAfterActivationPostgres() async throws { try await Self.usedAfterActivation(.postgres) }
}
