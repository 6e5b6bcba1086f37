import Fluent
import Vapor

/// `/v1/teams/:team/apps`: a team's apps and their device credentials (returned once).
struct AppController: RouteCollection {
    struct CreateApp: Content {
        let name: String; let platform: String; let bundleID: String?
        /// The identifiers of the team's collections the app may read; none when absent.
        var collections: [String]?
        /// The attestation policy; `none` when absent.
        var attestation: AttestationSettings?
    }
    /// A change to an app: the collections it may read (replacing the ones it had), its
    /// attestation policy, or both; what is absent stays as it was.
    struct UpdateApp: Content {
        var collections: [String]?
        var attestation: AttestationSettings?
    }
    struct AppView: Content {
        let id: UUID; let name: String; let platform: String; let bundleID: String?
        /// The identifiers of the collections its devices may read, sorted.
        let collections: [String]
        /// The attestation policy its devices' key requests must meet.
        let attestation: AttestationSettings
        let createdAt: Date?; let revokedAt: Date?
        /// Present only in the answer that created or rotated it.
        let credential: String?
    }

    /// The device-credential cache of the manifest endpoint, told about rotations and revocations.
    let credentials: AppCredentials

    static let platforms = ["ios", "ipados", "macos", "tvos", "watchos", "visionos", "android", "linux", "windows", "web", "other"]

    func boot(routes: any RoutesBuilder) throws {
        let apps = routes.grouped("v1", "teams", ":team", "apps")
        apps.post(use: create)
        apps.get(use: list)
        apps.patch(":app", use: update)
        apps.post(":app", "credential", use: rotate)
        apps.delete(":app", use: revoke)
    }

    func create(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .developer)
        let body = try req.content.decode(CreateApp.self)
        return try await Self.register(body, in: team, actor: try req.user().name, on: req.db).encodeResponse(status: .created, for: req)
    }

    /// Registers an app of `team`; the answer carries its credential, the only time it is shown.
    static func register(_ body: CreateApp, in team: TeamRecord, actor: String, on db: any Database) async throws -> AppView {
        try Names.validate(body.name, what: "app name")
        guard Self.platforms.contains(body.platform.lowercased()) else {
            throw APIError.invalid("platform must be one of \(Self.platforms.joined(separator: ", "))")
        }
        if let bundleID = body.bundleID { try Names.validate(bundleID, what: "bundle identifier") }
        let attestation = try (body.attestation ?? .none).validated(appBundleID: body.bundleID)
        let credential = Secrets.make(prefix: "cfa_")
        let app = AppRecord(teamID: try team.requireID(), name: body.name, platform: body.platform.lowercased(),
                            bundleID: body.bundleID, credentialHash: Secrets.hash(credential))
        app.attestation = try attestation.storedJSON()
        let identifiers = body.collections ?? []
        let collections = try await AppCollections.resolve(identifiers, in: team.requireID(), on: db)
        // The app, its collections and its audit row are one transaction: if the audit fails, no
        // app exists whose credential nobody was shown.
        // A transaction that reads before it writes (the app's bindings): `writeTransaction`, so that
        // concurrent ones wait on SQLite instead of failing with "database is locked".
        try await db.writeTransaction { db in
            try await app.create(on: db)
            try await AppCollections.bind(app.requireID(), to: collections, on: db)
            try await Audit.record(on: db, teamID: team.id, action: "app.create", actor: actor,
                                   target: "\(try app.requireID()) collections: \(Self.describe(collections)); attestation: \(attestation.summary)",
                                   outcome: "ok")
        }
        return try Self.view(app, collections: collections.map(\.identifier).sorted(), credential: credential)
    }

    func list(req: Request) async throws -> [AppView] {
        let (team, _) = try await req.team(requiring: .viewer)
        let apps = try await AppRecord.query(on: req.db).filter(\.$team.$id == team.requireID()).sort(\.$createdAt).all()
        let collections = try await AppCollections.identifiers(of: apps.map { try $0.requireID() }, on: req.db)
        return try apps.map { try Self.view($0, collections: collections[try $0.requireID()] ?? [], credential: nil) }
    }

    func update(req: Request) async throws -> AppView {
        let (team, app) = try await Self.app(req, requiring: .developer)
        let body = try req.content.decode(UpdateApp.self)
        guard body.collections != nil || body.attestation != nil else {
            throw APIError.invalid("name collections, attestation or both")
        }
        return try await Self.update(app, in: team, collections: body.collections, attestation: body.attestation,
                                     actor: try req.user().name, on: req.db, credentials: credentials)
    }

    /// Binds `app` to exactly `identifiers` (collections of `team`) and sets its attestation policy,
    /// each when given, audited; the API's and the dashboard's way. The cached credential check
    /// forgets the app, so the change holds at once on this instance and within a second on the others.
    /// A changed policy forgets every install attested under the old one: they attest again.
    static func update(_ app: AppRecord, in team: TeamRecord, collections identifiers: [String]?, attestation: AttestationSettings? = nil,
                       actor: String, on db: any Database, credentials: AppCredentials) async throws -> AppView {
        let appID = try app.requireID()
        var resolved: [CollectionRecord]?
        if let identifiers { resolved = try await AppCollections.resolve(identifiers, in: team.requireID(), on: db) }
        let collections = resolved
        let policy = try attestation?.validated(appBundleID: app.bundleID)
        // The row's form of the policy, made once: `.some(nil)` stores `none`.
        let stored = try policy.map { try $0.storedJSON() }
        let changes = [collections.map { "collections: \(Self.describe($0))" }, policy.map { "attestation: \($0.summary)" }].compactMap { $0 }
        try await UniqueViolation.asConflict("the app's collections were changed by another request at the same moment; list the apps and retry if needed") {
          try await db.writeTransaction { db in
            if let collections { try await AppCollections.bind(appID, to: collections, on: db) }
            if let stored, stored != app.attestation {
                try await AppRecord.query(on: db).filter(\.$id == appID).set(\.$attestation, to: stored).update()
                // Installs attested under the old policy were checked against its rules only (its
                // signing digests, security level, environment): they attest again under the new
                // one (the SDK does so by itself on `attestation_unknown_key`).
                try await AttestedDeviceRecord.query(on: db).filter(\.$appID == appID).delete()
            }
            try await Audit.record(on: db, teamID: team.id, action: "app.update", actor: actor,
                                   target: "\(appID) " + changes.joined(separator: "; "), outcome: "ok")
          }
        }
        if let stored { app.attestation = stored }
        credentials.forget(appID)
        var names = collections?.map(\.identifier).sorted() ?? []
        if collections == nil { names = try await AppCollections.identifiers(of: appID, on: db) }
        return try Self.view(app, collections: names, credential: nil)
    }

    /// `A, B` or `none`, for the audit log.
    static func describe(_ collections: [CollectionRecord]) -> String {
        collections.isEmpty ? "none" : String(collections.map(\.identifier).sorted().joined(separator: ", ").prefix(500))
    }

    func rotate(req: Request) async throws -> AppView {
        let (team, app) = try await Self.app(req, requiring: .developer)
        guard app.revokedAt == nil else { throw APIError.conflict("app \(try app.requireID()) is revoked") }
        let credential = Secrets.make(prefix: "cfa_")
        let actor = try req.user().name, appID = try app.requireID()
        let replaced = app.credentialHash, fresh = Secrets.hash(credential), rotatedAt = Date()
        // The new credential and its audit row are one transaction: committing a credential that
        // this answer then fails to show would lock the app's devices out. The update applies only
        // to the credential this request read: of two rotations at the same moment, the second
        // would otherwise overwrite the first one's new credential, which its caller was shown.
        try await req.db.writeTransaction { db in
            try await AppRecord.query(on: db).filter(\.$id == appID).filter(\.$credentialHash == replaced)
                .set(\.$previousCredentialHash, to: replaced).set(\.$credentialHash, to: fresh)
                .set(\.$credentialRotatedAt, to: rotatedAt).update()
            guard try await AppRecord.find(appID, on: db)?.credentialHash == fresh else {
                throw APIError.conflict("the app's credential was rotated by another request at the same moment; rotate it again if you need a new one")
            }
            try await Audit.record(on: db, teamID: team.id, action: "app.rotate-credential", actor: actor, target: "\(appID)", outcome: "ok")
        }
        app.previousCredentialHash = replaced
        app.credentialHash = fresh
        app.credentialRotatedAt = rotatedAt
        credentials.forget(appID)
        return try Self.view(app, collections: try await AppCollections.identifiers(of: appID, on: req.db), credential: credential)
    }

    func revoke(req: Request) async throws -> HTTPStatus {
        let (team, app) = try await Self.app(req, requiring: .developer)
        let actor = try req.user().name, appID = try app.requireID()
        try await req.db.transaction { db in
            if app.revokedAt == nil {
                app.revokedAt = Date()
                try await app.update(on: db)
            }
            try await Audit.record(on: db, teamID: team.id, action: "app.revoke", actor: actor, target: "\(appID)", outcome: "ok")
        }
        credentials.forget(appID)
        return .noContent
    }

    static func app(_ req: Request, requiring role: Role) async throws -> (TeamRecord, AppRecord) {
        let (team, _) = try await req.team(requiring: role)
        guard let id = req.parameters.get("app", as: UUID.self),
              let app = try await AppRecord.query(on: req.db).filter(\.$id == id).filter(\.$team.$id == team.requireID()).first()
        else { throw APIError.notFound("app") }
        return (team, app)
    }

    static func view(_ app: AppRecord, collections: [String], credential: String?) throws -> AppView {
        AppView(id: try app.requireID(), name: app.name, platform: app.platform, bundleID: app.bundleID, collections: collections,
                attestation: (try? AttestationSettings.stored(app.attestation)) ?? .none, createdAt: app.createdAt, revokedAt: app.revokedAt, credential: credential)
    }
}
