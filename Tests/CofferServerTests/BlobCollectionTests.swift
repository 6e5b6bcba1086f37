import CofferFormat
@testable import CofferServer
import Fluent
import Foundation
import SQLKit
import Testing

@Suite("Blob collection")
struct BlobCollectionTests {
    static func upload(_ world: World, key: ModelKey, seed: String) async throws -> Data {
        let sealed = Data(try SealedModel.seal(Array(seed.utf8), name: "m", using: .modelKey(key)))
        let reply = try await world.admin.call("PUT", "/v1/teams/T/blobs/\(sealed.sha256Hex)", body: sealed)
        #expect(reply.status == 201)
        return sealed
    }

    static func run(_ backend: Backend, store: TestStore) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres, store: store) { $0.blobCollectionInterval = 0 }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        let loose = try await Self.upload(world, key: key, seed: "loose")
        let referenced = try await Self.upload(world, key: key, seed: "referenced")
        let leased = try await Self.upload(world, key: key, seed: "leased")
        try await BlobReferenceRecord(blobID: referenced.sha256Hex, holder: "deployment:test/model").create(on: server.app.db)
        let grace: TimeInterval = 3600
        let later = Date().addingTimeInterval(grace + 60)
        try await UploadLeaseRecord(blobID: leased.sha256Hex, expiresAt: later.addingTimeInterval(60)).create(on: server.app.db)
        let collector = BlobCollector(store: try #require(server.app.blobStore), grace: grace)

        // Within the grace period nothing goes.
        #expect(try await collector.collect(on: server.app.db, now: Date()).isEmpty)
        // After it, only the blob with neither a reference nor an upload in flight goes.
        #expect(try await collector.collect(on: server.app.db, now: later) == [loose.sha256Hex])
        let public_ = HTTP(base: server.base)
        #expect(try await public_.call("GET", "/v1/blobs/\(loose.sha256Hex)").status == 404)
        #expect(try await public_.call("GET", "/v1/blobs/\(referenced.sha256Hex)").body == referenced)
        #expect(try await public_.call("GET", "/v1/blobs/\(leased.sha256Hex)").body == leased)
        #expect(try await server.leftoverUploads() == 0)

        // Bytes whose row is gone (a removal that failed after the row was deleted) are found in the
        // store and removed after the grace period too, unless an upload in flight holds a lease.
        let store = try #require(server.app.blobStore)
        let unrecorded = try await Self.upload(world, key: key, seed: "unrecorded")
        let unrecordedLeased = try await Self.upload(world, key: key, seed: "unrecorded, leased")
        try await BlobRecord.query(on: server.app.db).filter(\.$id ~~ [unrecorded.sha256Hex, unrecordedLeased.sha256Hex]).delete()
        try await UploadLeaseRecord(blobID: unrecordedLeased.sha256Hex, expiresAt: later.addingTimeInterval(60)).create(on: server.app.db)
        #expect(try await collector.collect(on: server.app.db, now: Date()).isEmpty)
        #expect(try await store.size(of: unrecorded.sha256Hex) == Int64(unrecorded.count))
        #expect(try await collector.collect(on: server.app.db, now: later) == [unrecorded.sha256Hex])
        #expect(try await store.size(of: unrecorded.sha256Hex) == nil)
        #expect(try await store.size(of: unrecordedLeased.sha256Hex) == Int64(unrecordedLeased.count))

        // A collected blob can be uploaded again; a repeated upload restarts its grace period.
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(loose.sha256Hex)", body: loose).status == 201)
        #expect(try await collector.collect(on: server.app.db, now: Date().addingTimeInterval(grace - 60)).isEmpty)
        #expect(try await public_.call("GET", "/v1/blobs/\(loose.sha256Hex)").body == loose)
    }

    @Test("unreferenced blobs past their grace period go; referenced and in-flight ones stay (SQLite)", arguments: TestStore.available)
    func sqlite(store: TestStore) async throws { try await Self.run(.sqlite, store: store) }

    @Test("the same over PostgreSQL", .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"),
          arguments: TestStore.available)
    func postgres(store: TestStore) async throws { try await Self.run(.postgres, store: store) }

    @Test("an upload of a blob being collected waits for the collection's hold, then stores its bytes", arguments: TestStore.available)
    func hold(store: TestStore) async throws {
        let server = try await TestServer.start(store: store) { $0.blobCollectionInterval = 0 }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        let sealed = Data(try SealedModel.seal(Array("held".utf8), name: "m", using: .modelKey(key)))
        let hold = try await CollectionHold.take(sealed.sha256Hex, on: server.app.db)
        let upload = Task { try await world.admin.call("PUT", "/v1/teams/T/blobs/\(sealed.sha256Hex)", body: sealed) }
        try await Task.sleep(for: .milliseconds(600))
        // Held: the upload has its lease but has not stored anything.
        #expect(try await HTTP(base: server.base).call("GET", "/v1/blobs/\(sealed.sha256Hex)").status == 404)
        try await hold.delete(on: server.app.db)
        #expect(try await upload.value.status == 201)
        #expect(try await HTTP(base: server.base).call("GET", "/v1/blobs/\(sealed.sha256Hex)").body == sealed)
    }

    @Test("a blob set aside by a collection is not taken for an abandoned upload, and one a collection left aside is put back or removed by the next")
    func setAsideBlobsSurvive() async throws {
        let server = try await TestServer.start(store: .folder) { $0.blobCollectionInterval = 0 }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        let store = try #require(server.app.blobStore as? FolderBlobStore)
        let old = try await Self.upload(world, key: key, seed: "old")
        let stranded = try await Self.upload(world, key: key, seed: "stranded")
        let unrecorded = try await Self.upload(world, key: key, seed: "unrecorded")
        for sealed in [old, stranded] {
            try await BlobReferenceRecord(blobID: sealed.sha256Hex, holder: "deployment:test/\(sealed.sha256Hex.prefix(8))").create(on: server.app.db)
        }

        // A blob file keeps its modification time when moved aside: a week-old blob set aside
        // looked, in incoming/, like an upload abandoned a week ago, and the stale-upload sweep (of
        // this or another instance sharing the folder) deleted it before it was put back.
        let weekAgo = Date().addingTimeInterval(-7 * 86_400)
        try FileManager.default.setAttributes([.modificationDate: weekAgo], ofItemAtPath: store.path(of: old.sha256Hex))
        let withdrawn = await store.withdraw(old.sha256Hex)
        #expect(try await store.removeStaleUploads(olderThan: 3600) == 0)
        await store.restore(withdrawn)
        #expect(try await store.size(of: old.sha256Hex) == Int64(old.count))

        // A collection that died (or lost its database) between withdrawing and finishing: the next
        // one, once the hold has expired, puts back what the database records and removes the rest.
        _ = await store.withdraw(stranded.sha256Hex)
        _ = await store.withdraw(unrecorded.sha256Hex)
        try await BlobRecord.query(on: server.app.db).filter(\.$id == unrecorded.sha256Hex).delete()
        #expect(try await HTTP(base: server.base).call("GET", "/v1/blobs/\(stranded.sha256Hex)").status == 404)
        let collector = BlobCollector(store: store, grace: 30 * 86_400)
        #expect(try await collector.collect(on: server.app.db, now: Date().addingTimeInterval(CollectionHold.lifetime + 60)).isEmpty)
        #expect(try await HTTP(base: server.base).call("GET", "/v1/blobs/\(stranded.sha256Hex)").body == stranded)
        #expect(try await store.size(of: unrecorded.sha256Hex) == nil)
        let aside = (try? FileManager.default.contentsOfDirectory(atPath: store.root + "/collecting")) ?? []
        #expect(aside.isEmpty, "\(aside)")
    }

    @Test("on PostgreSQL, a deployment saved while its unused blob is collected keeps the blob: the collection waits for it and sees it used (a day's grace, and none)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"), arguments: [86_400.0, 0])
    func deploymentSavedDuringCollection(grace: TimeInterval) async throws {
        let server = try await TestServer.start(postgres: true) { $0.blobCollectionInterval = 0 }
        // The collection runs on a second instance sharing the database and folder (its own
        // connections: this instance's pool would make it wait for the transaction below).
        let second = try await TestServer.start(postgres: true, dataDirectory: server.dataDirectory, databaseURL: server.configuration.databaseURL) {
            $0.blobCollectionInterval = 0
        }
        defer {
            Task {
                try? await second.stop(removingData: false)
                try? await server.stop()
            }
        }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        let sealed = try await Self.upload(world, key: key, seed: "picked while collected")
        let address = sealed.sha256Hex
        let sql = try #require(server.app.db as? any SQLDatabase)
        // Unused for ten days: past a day's grace period.
        try await sql.raw("UPDATE blobs SET last_uploaded_at = \(bind: Date().addingTimeInterval(-10 * 86_400)) WHERE id = \(bind: address)").run()
        let team = try #require(try await TeamRecord.query(on: server.app.db).filter(\.$name == "T").first())
        let collection = CollectionRecord(teamID: try team.requireID(), identifier: "C", description: "", modelNames: ["m"])
        try await collection.create(on: server.app.db)
        let store = try #require(server.app.blobStore)
        // With no grace, the mark the deployment sets (its own clock, before the collection's)
        // is past the cutoff too: only the reference, committed meanwhile, keeps the blob.
        let collector = BlobCollector(store: try #require(second.app.blobStore), grace: grace)
        let collecting = try await server.app.db.transaction { tx -> Task<[String], any Error> in
            // What saving a deployment does: resolve the version, then reference its blob; the
            // collection runs in between, before the reference is committed.
            _ = try await ModelVersions(collection: collection, store: store, actor: "admin", database: tx).resolve(["m": address])
            let collecting = Task { try await collector.collect(on: second.app.db) }
            // Until the collection's DELETE waits for this transaction's row lock (at most 10 s;
            // without the lock it never waits and simply deletes the row).
            // Asked on this transaction's own connection (the pool has no other free one); the
            // activity view is a per-transaction snapshot unless cleared.
            let own = try #require(tx as? any SQLDatabase)
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                try await own.raw("SELECT pg_stat_clear_snapshot()").run()
                let waiting = try await own.raw("""
                    SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'
                    AND (query LIKE 'DELETE FROM blobs%' OR query LIKE 'SELECT id FROM blobs WHERE id = % FOR UPDATE')
                    """).first()?.decode(column: "n", as: Int.self) ?? 0
                if waiting > 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            try await BlobReferenceRecord(blobID: address, holder: "deployment:test/m").create(on: tx)
            return collecting
        }
        #expect(try await collecting.value.isEmpty)
        #expect(try await BlobRecord.find(address, on: server.app.db) != nil)
        #expect(try await HTTP(base: server.base).call("GET", "/v1/blobs/\(address)").body == sealed)
    }
}
