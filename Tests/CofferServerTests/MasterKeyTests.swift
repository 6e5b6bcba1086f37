import CofferFormat
@testable import CofferServer
import Crypto
import Foundation
import S3TestSupport
import SQLKit
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

        // The replaced key is kept beside the new one (0600), for a database restored from before.
        let oldID = try MasterKey(base64: oldMaster.trimmingCharacters(in: .whitespacesAndNewlines)).id
        let kept = PendingMasterKey.previousPath(for: server.dataDirectory + "/master.key", id: oldID)
        #expect(try MasterKey.read(at: kept)?.id == oldID)
        #expect((try FileManager.default.attributesOfItem(atPath: kept)[.posixPermissions] as? Int) == 0o600)
        #expect(message.contains(kept), "\(message)")

        let restarted = try await TestServer.start(server.configuration)
        let device = Device()
        for key in keys {
            let reply = try await device.request(key.id, app: app, on: restarted)
            #expect(try device.open(reply, keyID: key.id) == key.key)
        }
        // A rotation by a version from before the record (it re-wraps the keys, not the record):
        // the stored keys decide at the next start, which corrects the record.
        try await restarted.app.db.sql().raw("UPDATE current_master_key SET master_key_id = \(bind: oldID)").run()
        try await restarted.stop(removingData: false)
        let corrected = try await TestServer.start(server.configuration)
        #expect(try await CurrentMasterKey.read(on: corrected.app.db) == MasterKey(base64: newMaster).id)
        try await corrected.stop(removingData: false)

        var stale = server.configuration
        stale.masterKeyBase64 = oldMaster.trimmingCharacters(in: .whitespacesAndNewlines)
        await #expect(throws: (any Error).self) { _ = try await TestServer.start(stale) }
    }

    @Test("a rotation where there is no master key refuses, and makes none")
    func rotationWithoutAKey() async throws {
        var configuration = ServerConfiguration(
            dataDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("coffer-nokey-" + UUID().uuidString).path,
            hostname: "127.0.0.1", port: 0)
        configuration.bootstrapToken = nil
        defer { try? FileManager.default.removeItem(atPath: configuration.dataDirectory) }
        let newMaster = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
        await #expect(throws: (any Error).self) { _ = try await Server.rotateMasterKey(configuration, newKeyBase64: newMaster) }
        #expect(!FileManager.default.fileExists(atPath: configuration.dataDirectory + "/master.key"))
    }

    @Test("finishing a rotation refuses a pending key file that holds another key than the one it re-wrapped to")
    func finishRefusesAnotherPendingKey() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-pending-" + UUID().uuidString).path
        try DataFolder.prepare(folder)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let keyFile = folder + "/master.key"
        let b = try MasterKey(key: SymmetricKey(size: .bits256))
        let c = try MasterKey(key: SymmetricKey(size: .bits256))
        try SecretFile.create(at: keyFile, contents: b.fileContents)
        try SecretFile.create(at: PendingMasterKey.path(for: keyFile), contents: c.fileContents)
        #expect(throws: ServerSetupError.self) { try PendingMasterKey.finish(b, for: keyFile) }
        #expect(try MasterKey.read(at: keyFile)?.id == b.id)
        #expect(try MasterKey.read(at: PendingMasterKey.path(for: keyFile))?.id == c.id)
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
