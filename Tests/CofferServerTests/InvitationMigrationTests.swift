@testable import CofferServer
import Fluent
import Foundation
import SQLKit
import Testing

/// Migration 014 on invitations made before it: they record no maker and no token, and keep
/// working as they did; invitations made after it record both.
@Suite("Migration 014 (invitation issuers)")
struct InvitationMigrationTests {
    @Test("014 on invitations from before it: a pending one still redeems, a revoked one stays revoked; new ones record their maker and token (SQLite)")
    func sqlite() async throws { try await Self.migrate(.sqlite) }

    @Test("014 on invitations from before it: a pending one still redeems, a revoked one stays revoked; new ones record their maker and token (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.migrate(.postgres) }

    /// What the code before 014 left: team T with its owner olivia, her API token, and two
    /// invitations she made, one pending and one revoked.
    struct OldRows {
        let owner: UUID
        let token: String
        let pending: String
        let revoked: String
    }

    static func migrate(_ backend: Backend) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-migration-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var configuration = ServerConfiguration(dataDirectory: folder, hostname: "127.0.0.1", port: 0)
        configuration.databaseURL = backend.isPostgres ? try await PostgresDatabases.create() : nil
        defer {
            try? FileManager.default.removeItem(atPath: folder)
            if let database = configuration.databaseURL { PostgresDatabases.drop(database) }
        }
        _ = try MasterKey.load(base64: nil, path: folder + "/master.key")

        // The database as 013 left it, with the rows the code of that time wrote.
        let seed = try await TrustMigrationTests.run(configuration) { app in
            try TrustMigrationTests.use(configuration, on: app)
            app.migrations.add(CreateAccounts(), CreateAppsKeysBlobs(), CreateBlobReferences(), CreateDeployments(),
                               CreateModelFacts(), AddDashboardAccounts(), CreateUsageDaily(), AddTrustBoundaries(), AddRollouts(),
                               AddAttestation(), AddPasswordToken(), AddUploadReservations(), AddAttestedPolicyDigest(), AddTokenParents())
            try await app.autoMigrate()
            return try await Self.write(on: app.db.sql())
        }

        // 014 and what follows, as a server start runs them.
        let server = try await TestServer.start(postgres: backend.isPostgres, dataDirectory: folder, databaseURL: configuration.databaseURL)
        do {
            try await Self.check(seed, on: server)
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }

    static func check(_ seed: OldRows, on server: TestServer) async throws {
        let db = server.app.db
        let before = try await InvitationRecord.query(on: db).all()
        #expect(before.count == 2)
        #expect(before.allSatisfy { $0.creatorID == nil && $0.tokenID == nil })

        let owner = HTTP(base: server.base, token: seed.token)
        let states = try await owner.call("GET", "/v1/teams/T/invitations").array.compactMap { $0["state"] as? String }
        #expect(states.sorted() == ["pending", "revoked"])
        let anonymous = HTTP(base: server.base)
        let revoked = try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": seed.revoked, "name": "mallory"])
        #expect(revoked.status == 410)
        #expect(revoked.errorCode == "invitation_revoked")
        let redeemed = try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": seed.pending, "name": "ada"])
        #expect(redeemed.status == 201, "\(redeemed.text)")
        #expect(redeemed.object["team"] as? String == "T")

        // One made now records who made it and with which token.
        let made = try await owner.call("POST", "/v1/teams/T/invitations", json: ["role": "viewer"])
        #expect(made.status == 201, "\(made.text)")
        let id = try #require(UUID(uuidString: made.object["id"] as? String ?? ""))
        let record = try #require(try await InvitationRecord.find(id, on: db))
        #expect(record.creatorID == seed.owner)
        let tokenID = try await TokenRecord.query(on: db).filter(\.$tokenHash == Secrets.hash(seed.token)).first()?.id
        #expect(record.tokenID != nil && record.tokenID == tokenID)
    }

    /// Rows as the code before 014 wrote them (by SQL against that schema, not through today's models).
    static func write(on sql: any SQLDatabase) async throws -> OldRows {
        let earlier = Date(timeIntervalSinceNow: -3600), expiry = Date(timeIntervalSinceNow: 7 * 86_400)
        let team = UUID(), owner = UUID()
        try await sql.raw("INSERT INTO teams (id, name, created_at) VALUES (\(bind: team), 'T', \(bind: earlier))").run()
        try await sql.raw("INSERT INTO users (id, name, created_at) VALUES (\(bind: owner), 'olivia', \(bind: earlier))").run()
        try await sql.raw("""
            INSERT INTO memberships (id, team_id, user_id, role, created_at) VALUES \
            (\(bind: UUID()), \(bind: team), \(bind: owner), 'owner', \(bind: earlier))
            """).run()
        let token = Secrets.make(prefix: "cft_")
        try await sql.raw("""
            INSERT INTO api_tokens (id, user_id, name, token_hash, prefix, created_at) VALUES \
            (\(bind: UUID()), \(bind: owner), 'ci', \(bind: Secrets.hash(token)), \(bind: String(token.prefix(10))), \(bind: earlier))
            """).run()
        let pending = Secrets.make(prefix: "cfi_"), revoked = Secrets.make(prefix: "cfi_")
        for (code, revokedAt) in [(pending, nil), (revoked, earlier)] as [(String, Date?)] {
            let revokedAtValue: any SQLExpression = revokedAt.map { SQLBind($0) } ?? SQLLiteral.null
            try await sql.raw("""
                INSERT INTO invitations (id, team_id, role, note, code_hash, created_by, created_at, expires_at, revoked_at) VALUES \
                (\(bind: UUID()), \(bind: team), 'developer', '', \(bind: Secrets.hash(code)), 'olivia', \(bind: earlier), \
                \(bind: expiry), \(revokedAtValue))
                """).run()
        }
        return OldRows(owner: owner, token: token, pending: pending, revoked: revoked)
    }
}
