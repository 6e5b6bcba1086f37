import CofferFormat
@testable import CofferServer
import Crypto
import Fluent
import Foundation
import SQLKit
import Testing

/// Migration 015 on a database whose keys were wrapped before it: the first start records the master
/// key that wrapped them; the keys keep opening; a start with another master key is refused.
@Suite("Migration 015 (current master key)")
struct CurrentMasterKeyMigrationTests {
    @Test("015 on keys from before it: the first start records their master key, they still open, new keys are made; another master key is refused (SQLite)")
    func sqlite() async throws { try await Self.migrate(.sqlite) }

    @Test("015 on keys from before it: the first start records their master key, they still open, new keys are made; another master key is refused (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.migrate(.postgres) }

    /// What the code before 015 left: team T with a model key, and the manifest-signing key, both
    /// wrapped by the master key in the data folder.
    struct OldRows {
        let team: UUID
        let key: ModelKey
        let signingKeyID: String
    }

    static func migrate(_ backend: Backend) async throws {
        let configuration = try await MasterKeyRotationSafetyTests.emptyConfiguration(backend)
        defer { MasterKeyRotationSafetyTests.remove(configuration) }
        let masterKey = try MasterKey.load(base64: nil, path: configuration.dataDirectory + "/master.key")

        // The database as 014 left it, with the rows the code of that time wrote.
        let seed = try await TrustMigrationTests.run(configuration) { app in
            try TrustMigrationTests.use(configuration, on: app)
            app.migrations.add(CreateAccounts(), CreateAppsKeysBlobs(), CreateBlobReferences(), CreateDeployments(),
                               CreateModelFacts(), AddDashboardAccounts(), CreateUsageDaily(), AddTrustBoundaries(), AddRollouts(),
                               AddAttestation(), AddPasswordToken(), AddUploadReservations(), AddAttestedPolicyDigest(), AddTokenParents(),
                               AddInvitationIssuers())
            try await app.autoMigrate()
            return try await Self.write(on: app.db.sql(), masterKey: masterKey)
        }

        // 015 and what follows, as a server start runs them.
        let server = try await TestServer.start(postgres: backend.isPostgres, dataDirectory: configuration.dataDirectory,
                                                databaseURL: configuration.databaseURL)
        do {
            let db = server.app.db
            let record = try #require(try await CurrentMasterKeyRecord.find(CurrentMasterKeyRecord.only, on: db))
            #expect(record.masterKeyID == masterKey.id)
            // The key of before still opens, and the signing key of before still signs.
            let row = try #require(try await KeyRecord.find(seed.key.id, on: db))
            #expect(try masterKey.unwrap(row.wrappedKey, keyID: seed.key.id, teamID: seed.team) == seed.key.key)
            let announced = try await HTTP(base: server.base).call("GET", "/v1/signing-key")
            #expect(announced.object["keyID"] as? String == seed.signingKeyID)
            // Keys are made as before, under the recorded master key.
            let world = World(server)
            try await world.team("U")
            let made = try await world.key(in: "U")
            #expect(try await KeyRecord.find(made.id, on: db)?.masterKeyID == masterKey.id)
        } catch {
            try? await server.stop(removingData: false)
            throw error
        }
        try await server.stop(removingData: false)

        // Another master key is refused at start.
        var other = server.configuration
        other.masterKeyBase64 = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
        await #expect(throws: (any Error).self) { _ = try await TestServer.start(other) }
    }

    /// Rows as the code before 015 wrote them (by SQL against that schema, not through today's models).
    static func write(on sql: any SQLDatabase, masterKey: MasterKey) async throws -> OldRows {
        let earlier = Date(timeIntervalSinceNow: -3600)
        let team = UUID()
        try await sql.raw("INSERT INTO teams (id, name, created_at) VALUES (\(bind: team), 'T', \(bind: earlier))").run()
        let key = ModelKey.generate(name: "first")
        let wrapped = try masterKey.wrap(key.key, keyID: key.id, teamID: team)
        try await sql.raw("""
            INSERT INTO model_keys (id, team_id, name, wrapped_key, master_key_id, created_at) VALUES \
            (\(bind: key.id), \(bind: team), \(bind: key.name), \(bind: wrapped), \(bind: masterKey.id), \(bind: earlier))
            """).run()
        let signing = Curve25519.Signing.PrivateKey()
        let signingKeyID = SignedManifest.keyID(of: signing.publicKey)
        let sealed = try masterKey.seal(signing.rawRepresentation, binding: ManifestSigner.binding(keyID: signingKeyID))
        try await sql.raw("""
            INSERT INTO signing_keys (id, key_id, public_key, wrapped_key, master_key_id, created_at) VALUES \
            ('manifest', \(bind: signingKeyID), \(bind: signing.publicKey.rawRepresentation), \(bind: sealed), \(bind: masterKey.id), \(bind: earlier))
            """).run()
        return OldRows(team: team, key: key, signingKeyID: signingKeyID)
    }
}
