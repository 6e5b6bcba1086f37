import CofferFormat
@testable import CofferServer
import Crypto
import Foundation
import S3TestSupport
import Testing

@Suite("Master key rotation and several instances")
struct MasterKeyTests {
    @Test("rotation re-wraps every model key; the old master key is then refused at start")
    func rotation() async throws {
        let server = try await TestServer.start()
        let world = World(server)
        try await world.team("T")
        let app = try await world.app(in: "T")
        let keys = [try await world.key(in: "T", name: "a"), try await world.key(in: "T", name: "b")]
        for key in keys { try await world.release(key, in: "T", to: [app.id]) }
        let oldMaster = try String(contentsOfFile: server.dataDirectory + "/master.key", encoding: .utf8)
        try await server.stop(removingData: false)
        defer { try? FileManager.default.removeItem(atPath: server.dataDirectory) }

        let newMaster = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
        let message = try await Server.rotateMasterKey(server.configuration, newKeyBase64: newMaster)
        #expect(message.contains("re-wrapped 2 model keys"))
        #expect(!message.contains(newMaster) && !message.contains(oldMaster.trimmingCharacters(in: .whitespacesAndNewlines)))
        let mode = try FileManager.default.attributesOfItem(atPath: server.dataDirectory + "/master.key")[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let restarted = try await TestServer.start(server.configuration)
        let device = Device()
        for key in keys {
            let reply = try await device.request(key.id, app: app, on: restarted)
            #expect(try device.open(reply, keyID: key.id) == key.key)
        }
        try await restarted.stop(removingData: false)

        var stale = server.configuration
        stale.masterKeyBase64 = oldMaster.trimmingCharacters(in: .whitespacesAndNewlines)
        await #expect(throws: (any Error).self) { _ = try await TestServer.start(stale) }
    }

    @Test("several instances on one PostgreSQL share keys, apps and blobs",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"), arguments: TestStore.available)
    func severalInstances(store: TestStore) async throws {
        let databaseURL = try await PostgresDatabases.create()
        // One bucket for both instances, or one shared folder.
        let bucket = store == .s3 ? try await ObjectStoreSettings.testBucket() : nil
        let shared = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-shared-" + UUID().uuidString).path
        let master = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
        let token = "cft_shared_" + UUID().uuidString
        func configuration() -> ServerConfiguration {
            var configuration = ServerConfiguration(
                dataDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("coffer-node-" + UUID().uuidString).path,
                hostname: "127.0.0.1", port: 0, databaseURL: databaseURL, masterKeyBase64: master, bootstrapToken: token)
            if let bucket { configuration.objectStore = bucket } else { configuration.blobDirectory = shared }
            return configuration
        }
        // Started together: migrations and bootstrap must cope with the race.
        async let first = TestServer.start(configuration())
        async let second = TestServer.start(configuration())
        let (a, b) = try await (first, second)

        let world = World(a)
        try await world.team("Shared")
        let app = try await world.app(in: "Shared")
        let key = try await world.key(in: "Shared")
        try await world.release(key, in: "Shared", to: [app.id])
        let sealed = Data(try SealedModel.seal(Array(repeating: 7, count: 10_000), name: "m", using: .modelKey(key)))
        #expect(try await world.admin.call("PUT", "/v1/teams/Shared/blobs/\(sealed.sha256Hex)", body: sealed).status == 201)

        let device = Device()
        let reply = try await device.request(key.id, app: app, on: b)
        #expect(try device.open(reply, keyID: key.id) == key.key)
        let download = try await HTTP(base: b.base).call("GET", "/v1/blobs/\(sealed.sha256Hex)")
        #expect(download.body == sealed)
        let again = try await HTTP(base: b.base, token: token).call("PUT", "/v1/teams/Shared/blobs/\(sealed.sha256Hex)", body: sealed)
        #expect(again.status == 200)
        #expect(again.object["created"] as? Bool == false)
        // Nothing of the blobs is on either instance's disk when they live in the bucket.
        if bucket != nil {
            for node in [a, b] { #expect(!FileManager.default.fileExists(atPath: node.configuration.dataDirectory + "/blobs")) }
        }
        try await a.stop()
        try await b.stop()
        try? FileManager.default.removeItem(atPath: shared)
        if let bucket { await S3TestGateway.removeBucket(bucket.bucket) }
    }
}
