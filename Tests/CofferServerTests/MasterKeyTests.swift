import CofferFormat
@testable import CofferServer
import Crypto
import Fluent
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

    @Test("rotate-master-key refuses a new key file others may read (0644) with the fix, before the database changes; a 0600 one is taken")
    func newKeyFileOthersMayRead() async throws {
        let server = try await TestServer.start()
        let world = World(server)
        try await world.team("T")
        _ = try await world.key(in: "T")
        let keyFile = server.dataDirectory + "/master.key"
        let old = try #require(try MasterKey.read(at: keyFile))
        try await server.stop(removingData: false)
        defer { try? FileManager.default.removeItem(atPath: server.dataDirectory) }
        let before = try await Self.storedKeys(server.configuration)
        #expect(before.contains("record \(old.id)"))

        let newMaster = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
        let newKeyFile = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-new-master-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: newKeyFile) }
        try Data((newMaster + "\n").utf8).write(to: URL(fileURLWithPath: newKeyFile))
        #expect(chmod(newKeyFile, 0o644) == 0)
        do {
            let message = try await Server.rotateMasterKey(server.configuration, newKeyFile: newKeyFile)
            Issue.record("a new master key file others may read was taken: \(message)")
        } catch let refused as RefusedSecretFile {
            #expect(refused.problem == .open(mode: "644"))
            #expect(refused.description.contains(newKeyFile) && refused.description.contains("chmod 600"), "\(refused)")
            #expect(!refused.description.contains(newMaster))
        }
        // Nothing changed: the key file, no pending key, the wrapped keys and the record.
        #expect(try MasterKey.read(at: keyFile)?.id == old.id)
        #expect(!SecretFile.entryExists(at: PendingMasterKey.path(for: keyFile)))
        #expect(try await Self.storedKeys(server.configuration) == before)

        #expect(chmod(newKeyFile, 0o600) == 0)
        let message = try await Server.rotateMasterKey(server.configuration, newKeyFile: newKeyFile)
        #expect(message.contains("re-wrapped 1 model keys"), "\(message)")
        #expect(try MasterKey.read(at: keyFile)?.id == MasterKey(base64: newMaster).id)
    }

    @Test("check reads the record: one the stored keys contradict is only noted (a start corrects it); with no key stored, one naming another master key is serve's refusal, word for word")
    func checkReadsTheRecord() async throws {
        let server = try await TestServer.start()
        let configuration = server.configuration
        let keyFile = server.dataDirectory + "/master.key"
        let held = try #require(try MasterKey.read(at: keyFile))
        let other = try MasterKey(key: SymmetricKey(size: .bits256))
        // What a rotation by a version from before the record leaves: the signing key wrapped by `held`, the record naming another.
        try await server.app.db.sql().raw("UPDATE current_master_key SET master_key_id = \(bind: other.id)").run()
        try await server.stop(removingData: false)
        defer { try? FileManager.default.removeItem(atPath: configuration.dataDirectory) }
        let outdated = await ConfigurationCheck.run(configuration)
        #expect(!outdated.problems.contains { $0.contains("master key") }, "\(outdated.problems)")
        #expect(outdated.facts.contains { $0.contains("records master key \(other.id)") && $0.contains("corrects the record") }, "\(outdated.facts)")

        // Nothing stored, and the record names another master key: only the record can tell.
        try await MasterKeyRotationSafetyTests.onDatabase(configuration) { db in try await SigningKeyRecord.query(on: db).delete() }
        let refused = await ConfigurationCheck.run(configuration)
        let line = try #require(refused.problems.first { $0.contains("the database records master key \(other.id)") }, "\(refused.problems)")
        #expect(line.contains("\(keyFile) holds master key \(held.id)"), "\(line)")
        do {
            let started = try await TestServer.start(configuration)
            try await started.stop(removingData: false)
            Issue.record("a start with another master key than the recorded one")
        } catch {
            #expect("\(error)" == line)
        }
    }

    /// The stored wrapped keys (IDs, master key IDs, ciphertext) and the recorded master key ID, to compare.
    static func storedKeys(_ configuration: ServerConfiguration) async throws -> [String] {
        try await MasterKeyRotationSafetyTests.onDatabase(configuration) { db in
            let keys = try await KeyRecord.query(on: db).all().map { "\($0.id ?? "") \($0.masterKeyID) \($0.wrappedKey.base64EncodedString())" }
            let signing = try await SigningKeyRecord.query(on: db).all().map { "signing \($0.masterKeyID) \($0.wrappedKey.base64EncodedString())" }
            let recorded = try await CurrentMasterKey.read(on: db) ?? "none"
            return (keys + signing).sorted() + ["record \(recorded)"]
        }
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

    @Test("finishing a rotation writes again a kept previous key a crash left torn (empty, cut short), so the replaced key is never lost; a kept file holding another key stops it before master.key changes")
    func finishKeepsThePreviousKeyAfterATornWrite() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-pending-" + UUID().uuidString).path
        try DataFolder.prepare(folder)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let keyFile = folder + "/master.key", pending = PendingMasterKey.path(for: keyFile)
        for torn in [Data(), Data("c2VjcmV0".utf8)] {
            let old = try MasterKey(key: SymmetricKey(size: .bits256)), new = try MasterKey(key: SymmetricKey(size: .bits256))
            try SecretFile.create(at: keyFile, contents: old.fileContents)
            try SecretFile.create(at: pending, contents: new.fileContents)
            let kept = PendingMasterKey.previousPath(for: keyFile, id: old.id)
            // Killed after creating the kept file, before its bytes reached the disk.
            try SecretFile.create(at: kept, contents: torn)
            try PendingMasterKey.finish(new, for: keyFile)
            #expect(try MasterKey.read(at: keyFile)?.id == new.id)
            #expect(try MasterKey.read(at: kept)?.id == old.id, "the replaced key is kept (\(torn.count) bytes were there)")
            for file in [keyFile, kept] { try FileManager.default.removeItem(atPath: file) }
        }

        let old = try MasterKey(key: SymmetricKey(size: .bits256)), new = try MasterKey(key: SymmetricKey(size: .bits256))
        let other = try MasterKey(key: SymmetricKey(size: .bits256))
        try SecretFile.create(at: keyFile, contents: old.fileContents)
        try SecretFile.create(at: pending, contents: new.fileContents)
        let kept = PendingMasterKey.previousPath(for: keyFile, id: old.id)
        try SecretFile.create(at: kept, contents: other.fileContents)
        #expect(throws: ServerSetupError.self) { try PendingMasterKey.finish(new, for: keyFile) }
        #expect(try MasterKey.read(at: keyFile)?.id == old.id, "master.key is not replaced")
        #expect(try MasterKey.read(at: kept)?.id == other.id)
    }

    @Test("a pending key file is taken for a torn write only when it is a private regular file no longer than a rotation writes (empty, cut short, zeros); a pipe, a folder, more bytes that hold no key, a link to a missing file stop with one line naming it and what to do, and are left where they are")
    func pendingKeyTornWriteOrNot() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-pending-" + UUID().uuidString).path
        try DataFolder.prepare(folder)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let pending = PendingMasterKey.path(for: folder + "/master.key")
        let key = try MasterKey(key: SymmetricKey(size: .bits256))
        let whole = Array(key.fileContents)
        #expect(whole.count == MasterKey.writtenFileSize)

        try SecretFile.create(at: pending, contents: key.fileContents)
        #expect(try PendingMasterKey.readKey(at: pending)?.id == key.id)
        try FileManager.default.removeItem(atPath: pending)
        // Empty, cut short (a whole number of base64 groups, then not), zeros where the key had not reached the disk.
        let tornWrites: [[UInt8]] = [[], Array(whole.prefix(20)), Array(whole.prefix(43)), [UInt8](repeating: 0, count: MasterKey.writtenFileSize)]
        for torn in tornWrites {
            try SecretFile.create(at: pending, contents: Data(torn))
            #expect(try PendingMasterKey.readKey(at: pending) == nil, "\(torn.count) bytes")
            try FileManager.default.removeItem(atPath: pending)
        }

        let makers: [(String, () throws -> Void)] = [
            ("a pipe", { guard mkfifo(pending, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown) } }),
            ("a folder", { try FileManager.default.createDirectory(atPath: pending, withIntermediateDirectories: false) }),
            ("more than a rotation writes", { try SecretFile.create(at: pending, contents: Data(repeating: 0x78, count: MasterKey.writtenFileSize + 1)) }),
            ("a link to a missing file", { try FileManager.default.createSymbolicLink(atPath: pending, withDestinationPath: folder + "/gone") }),
        ]
        for (what, make) in makers {
            try make()
            do {
                _ = try PendingMasterKey.readKey(at: pending)
                Issue.record("\(what) was taken for a pending key or a torn write")
            } catch {
                let line = "\(error)"
                #expect(line.contains(pending) && (line.contains("move it away") || line.contains("move the link away")), "\(what): \(line)")
                #expect(!line.contains("\n"), "\(what): \(line)")
            }
            #expect(SecretFile.entryExists(at: pending), "\(what) is gone")
            try FileManager.default.removeItem(atPath: pending)
        }
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
