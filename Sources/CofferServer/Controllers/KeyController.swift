import CofferFormat
import Crypto
import Fluent
import Vapor

/// `/v1/teams/:team/keys`: team-bound model keys. Creation returns the `.modelkey` file once;
/// afterwards the material exists only encrypted under the master key.
struct KeyController: RouteCollection {
    struct CreateKey: Content { let name: String }
    struct KeyView: Content { let id: String; let name: String; let team: String; let createdAt: Date?; let revokedAt: Date? }

    let masterKey: MasterKey

    func boot(routes: any RoutesBuilder) throws {
        let keys = routes.grouped("v1", "teams", ":team", "keys")
        keys.post(use: create)
        keys.get(use: list)
        routes.delete("v1", "keys", ":key", use: revoke)
    }

    func create(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .developer)
        let body = try req.content.decode(CreateKey.self)
        let key = try await make(name: body.name, in: team, actor: try req.user().name, on: req.db)
        let response = Response(status: .created)
        response.headers.contentType = .json
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        response.body = .init(data: key.fileRepresentation())
        return response
    }

    /// Makes a key of `team` named `name`, stores it wrapped under the master key, and returns it:
    /// the only time its material leaves the server in the clear (the API and the dashboard both
    /// hand it over as the `.modelkey` file and forget it).
    ///
    /// 503 `master_key_rotated` when the database records another master key than this server's
    /// (rotated since it started): a key wrapped with the old one would not open once it is gone.
    func make(name: String, in team: TeamRecord, actor: String, on db: any Database) async throws -> ModelKey {
        try Names.validate(name, what: "key name")
        let key = ModelKey.generate(name: name)
        let teamID = try team.requireID()
        let keyID = key.id, masterKey = self.masterKey
        let wrapped = try masterKey.wrap(key.key, keyID: keyID, teamID: teamID)
        // The key and its audit row are one transaction: a key that exists was audited, and a
        // failed audit leaves no key that nobody was given. It holds the record of the current
        // master key, which a rotation waits for.
        do {
            try await db.writeTransaction { db in
                try await CurrentMasterKey.require(masterKey, on: db)
                try await KeyRecord(id: keyID, teamID: teamID, name: name, wrappedKey: wrapped, masterKeyID: masterKey.id).create(on: db)
                try await Audit.record(on: db, teamID: teamID, action: "key.create", actor: actor, target: keyID, outcome: "ok")
            }
        } catch let error as StaleMasterKey {
            db.logger.error("model key not stored: \(error)")
            throw StaleMasterKey.refusal
        }
        return key
    }

    func list(req: Request) async throws -> [KeyView] {
        let (team, _) = try await req.team(requiring: .viewer)
        return try await KeyRecord.query(on: req.db).filter(\.$team.$id == team.requireID()).sort(\.$createdAt).all()
            .map { KeyView(id: try $0.requireID(), name: $0.name, team: team.name, createdAt: $0.createdAt, revokedAt: $0.revokedAt) }
    }

    func revoke(req: Request) async throws -> HTTPStatus {
        let user = try req.user()
        guard let id = req.parameters.get("key"),
              let key = try await KeyRecord.query(on: req.db).filter(\.$id == id).with(\.$team).first()
        else { throw APIError.notFound("key") }
        req.parameters.set("team", to: key.team.name)
        do {
            _ = try await req.team(requiring: .developer)
        } catch let error as APIError where error.code == "not_a_member" {
            // Key IDs are in every sealed model's header: to anyone outside the team, a key is
            // unknown, not a key of a team named here.
            throw APIError.notFound("key")
        }
        try await req.db.transaction { db in
            if key.revokedAt == nil {
                key.revokedAt = Date()
                try await key.update(on: db)
            }
            try await Audit.record(on: db, teamID: key.$team.id, action: "key.revoke", actor: user.name, target: id, outcome: "ok")
        }
        return .noContent
    }
}
