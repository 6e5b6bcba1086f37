import Coffer
import CofferFormat
@testable import CofferServer
import Crypto
import Fluent
import Foundation
import Testing

/// Master key rotation against a crash between its steps, and against instances that keep running
/// with the old master key in memory (`DATA_DIR/master.key` replaced by another process, or several
/// instances on one PostgreSQL).
@Suite("Master key rotation: interrupted, and with instances running")
struct MasterKeyRotationSafetyTests {
    /// What a server left when it stopped: team T with an app and a key released to it, and the
    /// signing key that server announced. Its data folder and database are kept.
    struct Seed {
        let configuration: ServerConfiguration
        let app: (id: String, credential: String)
        let key: ModelKey
        let signingKey: Data

        var keyFile: String { configuration.dataDirectory + "/master.key" }
        var pendingFile: String { PendingMasterKey.path(for: keyFile) }

        static func make(_ backend: Backend) async throws -> Seed {
            let server = try await TestServer.start(postgres: backend.isPostgres)
            do {
                let world = World(server)
                try await world.team("T")
                let app = try await world.app(in: "T")
                let key = try await world.key(in: "T")
                try await world.release(key, in: "T", to: [app.id])
                let signingKey = try await HTTP(base: server.base).call("GET", "/v1/signing-key").body
                try await server.stop(removingData: false)
                return Seed(configuration: server.configuration, app: app, key: key, signingKey: signingKey)
            } catch {
                try? await server.stop()
                throw error
            }
        }

        /// The key opens for a device of the app, and manifests are signed by the same key as before.
        func expectServed(by server: TestServer) async throws {
            let device = Device()
            let reply = try await device.request(key.id, app: app, on: server)
            #expect(reply.status == 200, "\(reply.text)")
            #expect(try device.open(reply, keyID: key.id) == key.key)
            // Compared as JSON: the encoder's key order differs from one answer to the next.
            let now = try await HTTP(base: server.base).call("GET", "/v1/signing-key").body
            let fields = { (body: Data) in try JSONSerialization.jsonObject(with: body) as? [String: String] }
            #expect(try fields(now) != nil && fields(now) == fields(signingKey), "\(String(decoding: now, as: UTF8.self))")
        }
    }

    @Test("a rotation stopped after its commit, before its key file was moved, is finished by the next start: the key opens, the signing key is kept",
          arguments: Backend.available)
    func crashAfterCommit(_ backend: Backend) async throws {
        let seed = try await Seed.make(backend)
        defer { Self.remove(seed.configuration) }
        let old = try #require(try MasterKey.read(at: seed.keyFile))
        let new = try MasterKey(key: SymmetricKey(size: .bits256))

        // What `rotate-master-key` does up to its commit; the process dies before the rename.
        let count = try await Self.onDatabase(seed.configuration) { db -> Int in
            try await MasterKeyRotation.rotate(on: db, from: old, to: new, keyFile: seed.keyFile)
        }
        #expect(count == 1)
        #expect(try MasterKey.read(at: seed.keyFile)?.id == old.id)
        #expect(try MasterKey.read(at: seed.pendingFile)?.id == new.id)

        let server = try await TestServer.start(seed.configuration)
        do {
            #expect(try MasterKey.read(at: seed.keyFile)?.id == new.id)
            #expect(!FileManager.default.fileExists(atPath: seed.pendingFile))
            let mode = try FileManager.default.attributesOfItem(atPath: seed.keyFile)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(try await CurrentMasterKeyRecord.find(CurrentMasterKeyRecord.only, on: server.app.db)?.masterKeyID == new.id)
            try await seed.expectServed(by: server)
        } catch {
            try? await server.stop(removingData: false)
            throw error
        }
        try await server.stop(removingData: false)

        // The old key is refused from now on.
        var stale = seed.configuration
        stale.masterKeyBase64 = old.key.withUnsafeBytes { Data($0).base64EncodedString() }
        await #expect(throws: (any Error).self) { _ = try await TestServer.start(stale) }
    }

    @Test("a rotation stopped before its commit is undone by the next start, and so is a pending key file cut short by a power cut",
          arguments: Backend.available)
    func crashBeforeCommit(_ backend: Backend) async throws {
        let seed = try await Seed.make(backend)
        defer { Self.remove(seed.configuration) }
        let old = try #require(try MasterKey.read(at: seed.keyFile))

        // The pending key written, as the rotation does just before its commit; the database unchanged.
        try PendingMasterKey.write(try MasterKey(key: SymmetricKey(size: .bits256)), for: seed.keyFile)
        // Then: a pending file written only in part (no key in it).
        let partly = Data("c2VjcmV0IGN1dCBzaG9y".utf8)
        for damaged in [false, true] {
            if damaged {
                #expect(FileManager.default.createFile(atPath: seed.pendingFile, contents: partly, attributes: [.posixPermissions: 0o600]))
            }
            let server = try await TestServer.start(seed.configuration)
            do {
                #expect(!FileManager.default.fileExists(atPath: seed.pendingFile))
                #expect(try MasterKey.read(at: seed.keyFile)?.id == old.id)
                try await seed.expectServed(by: server)
            } catch {
                try? await server.stop(removingData: false)
                throw error
            }
            try await server.stop(removingData: false)
        }
    }

    @Test("a rotation run again after a crash after its commit finishes the first one and changes nothing more", arguments: Backend.available)
    func rotationRunAgain(_ backend: Backend) async throws {
        let seed = try await Seed.make(backend)
        defer { Self.remove(seed.configuration) }
        let old = try #require(try MasterKey.read(at: seed.keyFile))
        let newBase64 = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
        let new = try MasterKey(base64: newBase64)
        _ = try await Self.onDatabase(seed.configuration) { db -> Int in
            try await MasterKeyRotation.rotate(on: db, from: old, to: new, keyFile: seed.keyFile)
        }

        let message = try await Server.rotateMasterKey(seed.configuration, newKeyBase64: newBase64)
        #expect(message.contains("already"), "\(message)")
        #expect(try MasterKey.read(at: seed.keyFile)?.id == new.id)
        #expect(!FileManager.default.fileExists(atPath: seed.pendingFile))
        let server = try await TestServer.start(seed.configuration)
        do {
            try await seed.expectServed(by: server)
        } catch {
            try? await server.stop(removingData: false)
            throw error
        }
        try await server.stop(removingData: false)
    }

    @Test("an instance still running with the old master key after a rotation stores no model key and delivers none (503 master_key_rotated, not 500; the SDK's keyFetchFailed, to try again); every stored key opens with the new one",
          arguments: Backend.available)
    func staleInstanceStoresAndDeliversNoKey(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres)
        let configuration = server.configuration
        defer { Self.remove(configuration) }
        let world = World(server)
        let app: (id: String, credential: String), before: ModelKey, new: MasterKey
        do {
            try await world.team("T")
            app = try await world.app(in: "T")
            before = try await world.key(in: "T", name: "before")
            let collection = try await world.release(before, in: "T", to: [app.id])
            let signingKey = try await HTTP(base: server.base).call("GET", "/v1/signing-key").object["publicKey"] as? String ?? ""

            // Another process rotates the master key; this instance keeps the old one in memory.
            let newBase64 = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
            new = try MasterKey(base64: newBase64)
            _ = try await Server.rotateMasterKey(configuration, newKeyBase64: newBase64)

            let refused = try await world.admin.call("POST", "/v1/teams/T/keys", json: ["name": "after"])
            #expect(refused.status == 503, "\(refused.text)")
            #expect(refused.errorCode == "master_key_rotated")
            #expect(!refused.text.contains(new.id))
            let rows = try await KeyRecord.query(on: server.app.db).all()
            #expect(rows.map(\.name) == ["before"])
            #expect(rows.allSatisfy { $0.masterKeyID == new.id })

            // The re-wrapped key does not open with the old master key: 503 too, not 500.
            let undelivered = try await Device().request(before.id, app: app, on: server)
            #expect(undelivered.status == 503, "\(undelivered.text)")
            #expect(undelivered.errorCode == "master_key_rotated", "\(undelivered.text)")
            #expect(!undelivered.text.contains(new.id))
            // The SDK: the key could not be fetched (try again later), not a refusal of it.
            let cache = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-stale-sdk-" + UUID().uuidString)
            defer { try? FileManager.default.removeItem(at: cache) }
            let client = try CofferClient(configuration: CofferConfiguration(
                serverURL: server.base, appID: app.id, credential: app.credential, publicKey: signingKey, cacheDirectory: cache))
            let opened = try await client.beginAccessing(identifier: collection)
            do {
                _ = try await opened.entries["m"]?.data()
                Issue.record("a key was delivered by an instance holding a replaced master key")
            } catch let CofferError.keyFetchFailed(keyID, reason) {
                #expect(keyID == before.id)
                #expect(reason.contains("503"), "\(reason)")
            }
        } catch {
            try? await server.stop(removingData: false)
            throw error
        }
        try await server.stop(removingData: false)

        // Restarted with the new key (the rotation put it in master.key): the key opens, and keys are made again.
        let restarted = try await TestServer.start(configuration)
        do {
            let device = Device()
            let reply = try await device.request(before.id, app: app, on: restarted)
            #expect(try device.open(reply, keyID: before.id) == before.key)
            _ = try await World(restarted).key(in: "T", name: "after")
            let rows = try await KeyRecord.query(on: restarted.app.db).all()
            #expect(rows.count == 2 && rows.allSatisfy { $0.masterKeyID == new.id })
        } catch {
            try? await restarted.stop(removingData: false)
            throw error
        }
        try await restarted.stop(removingData: false)
    }

    @Test("keys made while a rotation runs are stored before it and re-wrapped, or refused: none is left under the old master key",
          arguments: Backend.available)
    func keysDuringRotation(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres)
        let configuration = server.configuration
        defer { Self.remove(configuration) }
        do {
            let world = World(server)
            try await world.team("T")
            let admin = world.admin
            let newBase64 = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
            let new = try MasterKey(base64: newBase64)
            async let rotation = Server.rotateMasterKey(configuration, newKeyBase64: newBase64)
            let replies = try await withThrowingTaskGroup(of: HTTP.Reply.self) { group in
                for index in 0..<8 {
                    group.addTask { try await admin.call("POST", "/v1/teams/T/keys", json: ["name": "k\(index)"]) }
                }
                var replies: [HTTP.Reply] = []
                for try await reply in group { replies.append(reply) }
                return replies
            }
            _ = try await rotation
            for reply in replies {
                // 503 `busy`: no connection came free while the rotation held the tables (a loaded
                // machine); nothing stored either, which the rows below check.
                #expect(reply.status == 201 || (reply.status == 503 && ["master_key_rotated", "busy"].contains(reply.errorCode)),
                        "\(reply.status) \(reply.text)")
            }
            let made = try replies.filter { $0.status == 201 }.map { try ModelKey(fileRepresentation: $0.body) }
            let rows = try await KeyRecord.query(on: server.app.db).all()
            #expect(rows.count == made.count)
            for key in made {
                let row = try #require(rows.first { $0.id == key.id })
                #expect(row.masterKeyID == new.id)
                #expect(try new.unwrap(row.wrappedKey, keyID: key.id, teamID: row.$team.id) == key.key)
            }
        } catch {
            try? await server.stop(removingData: false)
            throw error
        }
        try await server.stop(removingData: false)
    }

    @Test("a manifest-signing key is not stored under a master key a rotation replaced", arguments: Backend.available)
    func staleSigningKey(_ backend: Backend) async throws {
        let configuration = try await Self.emptyConfiguration(backend)
        defer { Self.remove(configuration) }
        let old = try MasterKey(key: SymmetricKey(size: .bits256)), new = try MasterKey(key: SymmetricKey(size: .bits256))
        try await Self.onDatabase(configuration) { db in
            // Nothing wrapped yet: a rotation while an instance holding `old` was starting.
            _ = try await MasterKeyRotation.rotate(on: db, from: old, to: new)
            await #expect(throws: (any Error).self) { _ = try await ManifestSigner.loadOrCreate(masterKey: old, on: db) }
            #expect(try await SigningKeyRecord.query(on: db).count() == 0)
            let signer = try await ManifestSigner.loadOrCreate(masterKey: new, on: db)
            let row = try #require(try await SigningKeyRecord.find("manifest", on: db))
            #expect(row.masterKeyID == new.id && row.keyID == signer.keyID)
        }
    }

    // MARK: - Helpers

    /// A data folder (0700) and, for PostgreSQL, a database of its own; nothing in them yet.
    static func emptyConfiguration(_ backend: Backend) async throws -> ServerConfiguration {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-rotation-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var configuration = ServerConfiguration(dataDirectory: folder, hostname: "127.0.0.1", port: 0)
        configuration.databaseURL = backend.isPostgres ? try await PostgresDatabases.create() : nil
        return configuration
    }

    /// The database of `configuration`, migrated, as `rotate-master-key` opens it.
    static func onDatabase<T>(_ configuration: ServerConfiguration, _ body: (any Database) async throws -> T) async throws -> T {
        try await TrustMigrationTests.run(configuration) { app in
            try await configureDatabase(app, configuration)
            return try await body(app.db)
        }
    }

    /// Removes the data folder and the PostgreSQL database of `configuration`.
    static func remove(_ configuration: ServerConfiguration) {
        try? FileManager.default.removeItem(atPath: configuration.dataDirectory)
        if let database = configuration.databaseURL { PostgresDatabases.drop(database) }
    }
}
