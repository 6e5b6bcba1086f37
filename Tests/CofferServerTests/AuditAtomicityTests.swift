import Fluent
import Foundation
import SQLKit
import Testing

@testable import CofferServer

/// A change that shows a secret once (a model key, an app credential, an API token) and its audit
/// row are one transaction: both are stored, or neither. The audit insert is made to fail for real,
/// by a trigger in the database, and the change must then be gone too: a rotated credential that
/// was committed but never shown would lock the app's devices out.
@Suite("Audited changes are atomic")
struct AuditAtomicityTests {
    static func run(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres)
        defer { Task { try? await server.stop() } }
        let world = World(server)
        let admin = world.admin
        try await world.team("acme")
        let db = try #require(server.app.db as? any SQLDatabase)

        // Rotation: the audit fails, so the old credential stays the only one.
        let app = try await world.app(in: "acme")
        try await Self.refuseAudit(["app.rotate-credential"], on: db, backend)
        let refused = try await admin.call("POST", "/v1/teams/acme/apps/\(app.id)/credential")
        #expect(refused.status == 500)
        #expect(!String(decoding: refused.body, as: UTF8.self).contains("cfa_"), "no credential in a failed answer")
        let record = try #require(try await AppRecord.find(UUID(uuidString: app.id), on: server.app.db))
        #expect(record.credentialHash == Secrets.hash(app.credential), "the rotation was rolled back with its audit row")
        #expect(record.previousCredentialHash == nil)
        #expect(record.credentialRotatedAt == nil)

        // Registration, key creation and token creation: no row without its audit row.
        try await Self.refuseAudit(["app.create", "key.create", "token.create"], on: db, backend)
        let apps = try await admin.call("POST", "/v1/teams/acme/apps", json: ["name": "Lost", "platform": "ios"])
        #expect(apps.status == 500)
        #expect(try await admin.call("GET", "/v1/teams/acme/apps").array.map { $0["name"] as? String } == ["Demo"])
        #expect(try await admin.call("POST", "/v1/teams/acme/keys", json: ["name": "lost"]).status == 500)
        #expect(try await admin.call("GET", "/v1/teams/acme/keys").array.isEmpty)
        let tokensBefore = try await admin.call("GET", "/v1/tokens").array.count
        #expect(try await admin.call("POST", "/v1/tokens", json: ["name": "lost"]).status == 500)
        #expect(try await admin.call("GET", "/v1/tokens").array.count == tokensBefore)

        // With the audit working again, each change and its audit row appear together.
        try await db.raw("DROP TRIGGER refuse_audit\(unsafeRaw: backend.isPostgres ? " ON audit_events" : "")").run()
        let rotated = try await admin.call("POST", "/v1/teams/acme/apps/\(app.id)/credential")
        #expect(rotated.status == 200)
        let credential = try #require(rotated.object["credential"] as? String)
        let after = try #require(try await AppRecord.find(UUID(uuidString: app.id), on: server.app.db))
        #expect(after.credentialHash == Secrets.hash(credential))
        let key = try await world.key(in: "acme", name: "kept")
        let audit = try await admin.call("GET", "/v1/teams/acme/audit").array
        #expect(audit.filter { $0["action"] as? String == "app.rotate-credential" }.count == 1)
        #expect(audit.filter { $0["action"] as? String == "key.create" }.map { $0["target"] as? String } == [key.id])
        #expect(audit.filter { $0["action"] as? String == "app.create" }.count == 1, "the refused registration left no audit row either")
    }

    /// Makes every audit insert of one of `actions` fail inside the database (replacing an
    /// earlier list).
    static func refuseAudit(_ actions: [String], on db: any SQLDatabase, _ backend: Backend) async throws {
        let list = actions.map { "'\($0)'" }.joined(separator: ",")
        if backend.isPostgres {
            try await db.raw(SQLQueryString("""
                CREATE OR REPLACE FUNCTION refuse_audit() RETURNS trigger AS $$
                BEGIN
                  IF NEW.action IN (\(unsafeRaw: list)) THEN RAISE EXCEPTION 'audit refused'; END IF;
                  RETURN NEW;
                END $$ LANGUAGE plpgsql
                """)).run()
            try await db.raw("DROP TRIGGER IF EXISTS refuse_audit ON audit_events").run()
            try await db.raw("CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION refuse_audit()").run()
        } else {
            try await db.raw("DROP TRIGGER IF EXISTS refuse_audit").run()
            try await db.raw(SQLQueryString("""
                CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_events WHEN NEW.action IN (\(unsafeRaw: list))
                BEGIN SELECT RAISE(ABORT, 'audit refused'); END
                """)).run()
        }
    }

    @Test("a failed audit leaves no change (SQLite)")
    func sqlite() async throws { try await Self.run(.sqlite) }

    @Test("a failed audit leaves no change (PostgreSQL)", .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.run(.postgres) }
}
