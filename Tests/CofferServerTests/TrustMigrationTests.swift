@testable import CofferServer
import CofferFormat
import Crypto
import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Testing
import Vapor

/// Migration 007 on data the code before it wrote: a database migrated up to 006 and filled with
/// the rows that code made (by SQL against that schema, not through today's models), then 007 and
/// the later migrations run as a server start runs them, and the result checked over HTTP.
@Suite("Migration 007 (trust boundaries)")
struct TrustMigrationTests {
    @Test("007 on data from before it: apps bound to their team's collections, keys of activated deployments deliverable, unused first tokens revoked, memberships kept, a notice logged (SQLite)")
    func sqlite() async throws { try await Self.migrate(.sqlite) }

    @Test("007 on data from before it: apps bound to their team's collections, keys of activated deployments deliverable, unused first tokens revoked, memberships kept, a notice logged (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.migrate(.postgres) }

    static func migrate(_ backend: Backend) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-migration-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var configuration = ServerConfiguration(dataDirectory: folder, hostname: "127.0.0.1", port: 0)
        configuration.databaseURL = backend.isPostgres ? try await PostgresDatabases.create() : nil
        defer {
            try? FileManager.default.removeItem(atPath: folder)
            if let database = configuration.databaseURL { PostgresDatabases.drop(database) }
        }
        let masterKey = try MasterKey.load(base64: nil, path: folder + "/master.key")

        // The database as 006 left it, with the rows the code of that time wrote.
        let before = try await Self.run(configuration) { app in
            try Self.use(configuration, on: app)
            app.migrations.add(CreateAccounts(), CreateAppsKeysBlobs(), CreateBlobReferences(), CreateDeployments(),
                               CreateModelFacts(), AddDashboardAccounts(), CreateUsageDaily())
            try await app.autoMigrate()
            let seed = try await Seed.write(on: app.db.sql(), masterKey: masterKey)
            return (seed, try await Self.memberships(on: app.db))
        }
        let (seed, membershipsBefore) = before

        // 007 and what follows, as a server start runs them, logging into `log`.
        let log = CapturedLog()
        try await Self.run(configuration, logger: Logger(label: "migration-test") { _ in CapturingLogHandler(log: log) }) { app in
            try await configureDatabase(app, configuration)
        }
        let notices = log.entries.filter { $0.level == .notice && $0.message.hasPrefix("migration 007 bound") }
        #expect(notices.map(\.message) == [
            "migration 007 bound 1 existing app(s) to every collection of their team, as they could read before; "
                + "narrow each to what it needs: coffer app update --team TEAM APP_ID --collections A,B",
        ])

        let server = try await TestServer.start(postgres: backend.isPostgres, dataDirectory: folder, databaseURL: configuration.databaseURL)
        do {
            try await Self.check(seed, membershipsBefore: membershipsBefore, on: server)
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }

    /// What 007 must have done, seen through the server's HTTP interface (and its membership rows).
    static func check(_ seed: Seed, membershipsBefore: [String], on server: TestServer) async throws {
        // The first token its owner used still works; the one nobody used is revoked; a token with another name is kept.
        let owner = HTTP(base: server.base, token: seed.usedFirstToken)
        let teams = try await owner.call("GET", "/v1/teams")
        #expect(teams.status == 200)
        #expect(teams.array.compactMap { $0["name"] as? String } == ["T"])
        #expect(try await HTTP(base: server.base, token: seed.unusedFirstToken).call("GET", "/v1/teams").status == 401)
        #expect(try await HTTP(base: server.base, token: seed.unusedOtherToken).call("GET", "/v1/teams").status == 200)

        // The app reads both collections of its team, as it could before.
        let apps = try await owner.call("GET", "/v1/teams/T/apps")
        #expect(apps.status == 200, "\(apps.text)")
        #expect(apps.array.first { ($0["id"] as? String)?.lowercased() == seed.app.id.lowercased() }?["collections"] as? [String] == ["A", "B"])

        // Keys of deployments that were activated, now or before, are delivered; a draft's key is not.
        let device = Device()
        for key in [seed.activeKey, seed.archivedKey] {
            let delivered = try await device.request(key.id, app: seed.app, on: server)
            #expect(delivered.status == 200, "\(delivered.text)")
            guard delivered.status == 200 else { continue }
            let opened = try device.open(delivered, keyID: key.id) == key.key
            #expect(opened)
        }
        let drafted = try await device.request(seed.draftKey.id, app: seed.app, on: server)
        #expect(drafted.status == 403)
        #expect(drafted.errorCode == "not_in_app_collections")

        #expect(try await Self.memberships(on: server.app.db) == membershipsBefore)
        #expect(membershipsBefore.count == 2)
    }

    /// Makes an application logging to `logger`, runs `body` on it and shuts it down.
    static func run<T>(_ configuration: ServerConfiguration, logger: Logger = Logger(label: "migration-test"),
                       _ body: (Application) async throws -> T) async throws -> T {
        let app = try await Application.make(.testing, logger: logger)
        do {
            let result = try await body(app)
            try await app.asyncShutdown()
            return result
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
    }

    /// The database `configureDatabase` would use.
    static func use(_ configuration: ServerConfiguration, on app: Application) throws {
        if let url = configuration.databaseURL {
            app.databases.use(try .postgres(url: url), as: .psql)
        } else {
            app.databases.use(.sqlite(.file(configuration.dataDirectory + "/coffer.sqlite")), as: .sqlite)
        }
    }

    /// Every membership as one line: team, user, role and creation time.
    static func memberships(on db: any Database) async throws -> [String] {
        try await MembershipRecord.query(on: db).all()
            .map { "\($0.$team.id) \($0.$user.id) \($0.role.rawValue) \($0.createdAt?.timeIntervalSince1970 ?? -1)" }
            .sorted()
    }
}

/// What the code before 007 left in a database: team T with an owner and a developer who were
/// handed first tokens by `member add` (the owner's used, the developer's never), the owner's
/// unused token named otherwise, an app, and collections A and B. A had deployment 1 (key
/// `archivedKey`) activated and then replaced by deployment 2 (key `activeKey`); B has only a
/// draft (key `draftKey`). Rows are written as that code wrote them, activation included
/// (`collections.sequence` and `active_deployment_id`, the deployment's status and `activated_at`,
/// an `activations` row).
struct Seed {
    let usedFirstToken: String
    let unusedFirstToken: String
    let unusedOtherToken: String
    let app: (id: String, credential: String)
    let activeKey: ModelKey
    let archivedKey: ModelKey
    let draftKey: ModelKey

    static func write(on sql: any SQLDatabase, masterKey: MasterKey) async throws -> Seed {
        let now = Date(), earlier = Date(timeIntervalSinceNow: -86_400)
        let team = UUID(), owner = UUID(), developer = UUID()
        try await sql.raw("INSERT INTO teams (id, name, created_at) VALUES (\(bind: team), 'T', \(bind: earlier))").run()
        for (user, name) in [(owner, "olivia"), (developer, "victor")] {
            try await sql.raw("INSERT INTO users (id, name, created_at) VALUES (\(bind: user), \(bind: name), \(bind: earlier))").run()
        }
        try await sql.raw("""
            INSERT INTO memberships (id, team_id, user_id, role, created_at) VALUES \
            (\(bind: UUID()), \(bind: team), \(bind: owner), 'owner', \(bind: earlier)), \
            (\(bind: UUID()), \(bind: team), \(bind: developer), 'developer', \(bind: now))
            """).run()

        let usedFirst = Secrets.make(prefix: "cft_"), unusedFirst = Secrets.make(prefix: "cft_"), unusedOther = Secrets.make(prefix: "cft_")
        let tokens: [(UUID, String, String, Date?)] = [
            (owner, "first token", usedFirst, now), (developer, "first token", unusedFirst, nil), (owner, "ci", unusedOther, nil),
        ]
        for (user, name, secret, used) in tokens {
            let lastUsed: any SQLExpression = used.map { SQLBind($0) } ?? SQLLiteral.null
            try await sql.raw("""
                INSERT INTO api_tokens (id, user_id, name, token_hash, prefix, created_at, last_used_at) VALUES \
                (\(bind: UUID()), \(bind: user), \(bind: name), \(bind: Secrets.hash(secret)), \(bind: String(secret.prefix(10))), \
                \(bind: earlier), \(lastUsed))
                """).run()
        }

        let app = UUID(), credential = Secrets.make(prefix: "cfa_")
        try await sql.raw("""
            INSERT INTO apps (id, team_id, name, platform, bundle_id, credential_hash, created_at) VALUES \
            (\(bind: app), \(bind: team), 'Demo', 'ios', 'com.example.demo', \(bind: Secrets.hash(credential)), \(bind: earlier))
            """).run()

        let archivedKey = ModelKey.generate(name: "first"), activeKey = ModelKey.generate(name: "second"), draftKey = ModelKey.generate(name: "draft")
        for key in [archivedKey, activeKey, draftKey] {
            let wrapped = try masterKey.wrap(key.key, keyID: key.id, teamID: team)
            try await sql.raw("""
                INSERT INTO model_keys (id, team_id, name, wrapped_key, master_key_id, created_at) VALUES \
                (\(bind: key.id), \(bind: team), \(bind: key.name), \(bind: wrapped), \
                \(bind: masterKey.id), \(bind: earlier))
                """).run()
        }

        let a = UUID(), b = UUID()
        for (collection, identifier) in [(a, "A"), (b, "B")] {
            try await sql.raw("""
                INSERT INTO collections (id, team_id, identifier, description, model_names, sequence, created_at) VALUES \
                (\(bind: collection), \(bind: team), \(bind: identifier), '', \(bind: ["m"]), \(bind: Int64(0)), \(bind: earlier))
                """).run()
        }
        let first = try await deployment(in: a, named: "first", using: archivedKey, on: sql)
        let second = try await deployment(in: a, named: "second", using: activeKey, on: sql)
        _ = try await deployment(in: b, named: "draft", using: draftKey, on: sql)
        try await activate(first, in: a, at: earlier, on: sql)
        try await activate(second, in: a, at: now, on: sql)

        return Seed(usedFirstToken: usedFirst, unusedFirstToken: unusedFirst, unusedOtherToken: unusedOther,
                    app: (app.uuidString, credential), activeKey: activeKey, archivedKey: archivedKey, draftKey: draftKey)
    }

    /// A draft deployment of `collection` shipping one model version sealed with `key`.
    private static func deployment(in collection: UUID, named name: String, using key: ModelKey, on sql: any SQLDatabase) async throws -> UUID {
        let version = UUID(), deployment = UUID()
        let blob = SHA256.hash(data: Data(name.utf8)).hexString
        try await sql.raw("""
            INSERT INTO model_versions (id, collection_id, model_name, blob_id, size, key_id, created_by, created_at) VALUES \
            (\(bind: version), \(bind: collection), 'm', \(bind: blob), \(bind: Int64(100)), \(bind: key.id), 'olivia', \(bind: Date()))
            """).run()
        try await sql.raw("""
            INSERT INTO deployments (id, collection_id, name, status, rollout_seed, spec, created_by, created_at) VALUES \
            (\(bind: deployment), \(bind: collection), \(bind: name), 'draft', \(bind: UUID().uuidString), \
            \(bind: DeploymentSpec(defaults: ["m": version], rules: [])), 'olivia', \(bind: Date()))
            """).run()
        return deployment
    }

    /// Activation as the code before 007 wrote it (Activation.activate at that time).
    private static func activate(_ deployment: UUID, in collection: UUID, at time: Date, on sql: any SQLDatabase) async throws {
        guard let row = try await sql.raw("""
            UPDATE collections SET sequence = sequence + 1, active_deployment_id = \(bind: deployment) \
            WHERE id = \(bind: collection) RETURNING sequence
            """).first()
        else { throw TestFailure("no collection \(collection)") }
        let sequence = try row.decode(column: "sequence", as: Int64.self)
        try await sql.raw("UPDATE deployments SET status = 'archived' WHERE collection_id = \(bind: collection) AND status = 'active'").run()
        try await sql.raw("UPDATE deployments SET status = 'active', activated_at = \(bind: time) WHERE id = \(bind: deployment)").run()
        try await sql.raw("""
            INSERT INTO activations (id, collection_id, deployment_id, sequence, kind, actor, at) VALUES \
            (\(bind: UUID()), \(bind: collection), \(bind: deployment), \(bind: sequence), 'activate', 'olivia', \(bind: time))
            """).run()
    }
}

/// The messages an application logged, for a test to read (never printed).
final class CapturedLog: Sendable {
    struct Entry: Sendable { let level: Logger.Level; let message: String }
    private let box = NIOLockedValueBox<[Entry]>([])
    var entries: [Entry] { box.withLockedValue { $0 } }
    func append(_ entry: Entry) { box.withLockedValue { $0.append(entry) } }
}

/// A log handler that keeps every message in a ``CapturedLog``.
struct CapturingLogHandler: LogHandler {
    let log: CapturedLog
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        log.append(.init(level: event.level, message: event.message.description))
    }
}
