import CofferFormat
@testable import CofferServer
import Foundation
import Testing

@Suite("Blob collection")
struct BlobCollectionTests {
    static func upload(_ world: World, key: ModelKey, seed: String) async throws -> Data {
        let sealed = Data(try SealedModel.seal(Array(seed.utf8), name: "m", using: .modelKey(key)))
        let reply = try await world.admin.call("PUT", "/v1/teams/T/blobs/\(sealed.sha256Hex)", body: sealed)
        #expect(reply.status == 201)
        return sealed
    }

    static func run(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres) { $0.blobCollectionInterval = 0 }
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
        let store = try FolderBlobStore(root: server.configuration.resolvedBlobDirectoryForTests)
        let collector = BlobCollector(store: store, grace: grace)

        // Within the grace period nothing goes.
        #expect(try await collector.collect(on: server.app.db, now: Date()).isEmpty)
        // After it, only the blob with neither a reference nor an upload in flight goes.
        #expect(try await collector.collect(on: server.app.db, now: later) == [loose.sha256Hex])
        let public_ = HTTP(base: server.base)
        #expect(try await public_.call("GET", "/v1/blobs/\(loose.sha256Hex)").status == 404)
        #expect(try await public_.call("GET", "/v1/blobs/\(referenced.sha256Hex)").body == referenced)
        #expect(try await public_.call("GET", "/v1/blobs/\(leased.sha256Hex)").body == leased)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.root + "/incoming").isEmpty)

        // A collected blob can be uploaded again; a repeated upload restarts its grace period.
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(loose.sha256Hex)", body: loose).status == 201)
        #expect(try await collector.collect(on: server.app.db, now: Date().addingTimeInterval(grace - 60)).isEmpty)
        #expect(try await public_.call("GET", "/v1/blobs/\(loose.sha256Hex)").body == loose)
    }

    @Test("unreferenced blobs past their grace period go; referenced and in-flight ones stay (SQLite)")
    func sqlite() async throws { try await Self.run(.sqlite) }

    @Test("the same over PostgreSQL", .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.run(.postgres) }
}
