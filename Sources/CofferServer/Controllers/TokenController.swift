import Fluent
import SQLKit
import Vapor

/// `/v1/tokens`: the caller's personal API tokens. A token's value is returned once, at creation.
struct TokenController: RouteCollection {
    struct CreateToken: Content { let name: String }
    struct CreatedToken: Content { let id: UUID; let name: String; let token: String; let prefix: String }
    struct TokenView: Content {
        let id: UUID; let name: String; let prefix: String
        let createdAt: Date?; let lastUsedAt: Date?; let revokedAt: Date?
    }

    func boot(routes: any RoutesBuilder) throws {
        let tokens = routes.grouped("v1", "tokens")
        tokens.post(use: create)
        tokens.get(use: list)
        tokens.delete(":token", use: revoke)
    }

    func create(req: Request) async throws -> Response {
        let body = try req.content.decode(CreateToken.self)
        // Made with a token and no password: it hangs on that token, and goes when it is revoked.
        let user = try req.user()
        return try await Self.create(name: body.name, for: user, parent: user.tokenID, on: req.db).encodeResponse(status: .created, for: req)
    }

    /// The most unrevoked tokens an account holds: a leaked token minting without end would make
    /// its own revocation (which revokes what it made) ever longer.
    static let maximumLiveTokens = 100

    /// Makes a named token for `user`; the answer carries its value, the only time it is shown.
    /// `parent`: the API token that asked for it (revoking that one revokes this one), or the one
    /// that chose the password the dashboard asked for; nil for a password chosen otherwise.
    static func create(name: String, for user: AuthenticatedUser, parent: UUID?, on db: any Database) async throws -> CreatedToken {
        try Names.validate(name, what: "token name")
        // The token and its audit row are one transaction: no token exists that was not audited
        // and shown. A write transaction, the parent held: a revocation running now either ends
        // before the parent is checked (refused) or finds this token among its children.
        let (record, secret) = try await db.writeTransaction { db in
            if let parent, try await !holdLive(parent, of: user.userID, on: db) { throw APIError.unauthorized("the token that asked was revoked") }
            let live = try await TokenRecord.query(on: db).filter(\.$user.$id == user.userID).filter(\.$revokedAt == nil).count()
            guard live < maximumLiveTokens else {
                throw APIError(.conflict, "too_many_tokens", "an account holds at most \(maximumLiveTokens) unrevoked tokens: revoke one first")
            }
            let issued = try await Self.issue(for: user.userID, name: name, parent: parent, on: db)
            try await Audit.record(on: db, teamID: nil, action: "token.create", actor: user.name, target: name, outcome: "ok")
            return issued
        }
        return CreatedToken(id: try record.requireID(), name: record.name, token: secret, prefix: record.prefix)
    }

    /// Makes a token for a user; returns the record and the secret (to show once).
    static func issue(for userID: UUID, name: String, parent: UUID? = nil, on db: any Database, secret: String? = nil) async throws -> (TokenRecord, String) {
        let secret = secret ?? Secrets.make(prefix: "cft_")
        let record = TokenRecord(userID: userID, name: name, tokenHash: Secrets.hash(secret), prefix: String(secret.prefix(10)))
        record.parentTokenID = parent
        try await record.create(on: db)
        return (record, secret)
    }

    /// Whether token `id` of `userID` is unrevoked, held until the transaction ends (PostgreSQL:
    /// `FOR SHARE`, which a revocation's update waits for; SQLite: the write lock is held already).
    /// What is made with a token (a token, an invitation) is made only while it is.
    static func holdLive(_ id: UUID, of userID: UUID, on tx: any Database) async throws -> Bool {
        let sql = try tx.sql()
        let lock: SQLQueryString = sql.dialect.name == "postgresql" ? " FOR SHARE" : ""
        let rows = try await sql.raw("""
            SELECT id FROM \(unsafeRaw: TokenRecord.schema) WHERE id = \(bind: id) AND user_id = \(bind: userID) AND revoked_at IS NULL\(lock)
            """).all()
        return !rows.isEmpty
    }

    func list(req: Request) async throws -> [TokenView] {
        let user = try req.user()
        return try await TokenRecord.query(on: req.db).filter(\.$user.$id == user.userID).sort(\.$createdAt).all().map {
            TokenView(id: try $0.requireID(), name: $0.name, prefix: $0.prefix, createdAt: $0.createdAt,
                      lastUsedAt: $0.lastUsedAt, revokedAt: $0.revokedAt)
        }
    }

    func revoke(req: Request) async throws -> HTTPStatus {
        let user = try req.user()
        guard let id = req.parameters.get("token", as: UUID.self),
              let token = try await TokenRecord.query(on: req.db).filter(\.$id == id).filter(\.$user.$id == user.userID).first()
        else { throw APIError.notFound("token") }
        try await req.db.writeTransaction { db in
            if token.revokedAt == nil { try await Self.markRevoked(token, userID: user.userID, actor: user.name, on: db) }
            try await Audit.record(on: db, teamID: nil, action: "token.revoke", actor: user.name, target: token.name, outcome: "ok")
            try await Self.revokeDescendants(of: try token.requireID(), userID: user.userID, actor: user.name, on: db)
        }
        return .noContent
    }

    /// Marks `token` of `userID` revoked; a password it chose is cleared (``PasswordToken``), and
    /// the invitations made with it that nobody used are revoked (``InvitationIssuer``). Every
    /// revoked token passes here, those revoked with the one asked for too.
    private static func markRevoked(_ token: TokenRecord, userID: UUID, actor: String, on db: any Database) async throws {
        token.revokedAt = Date()
        try await token.update(on: db)
        let tokenID = try token.requireID()
        try await PasswordToken.tokenRevoked(tokenID, of: userID, actor: actor, on: db)
        try await Invitations.revokePending(madeWith: tokenID, actor: actor, on: db)
    }

    /// Revokes the tokens `tokenID` made through `POST /v1/tokens`, and those they made, each as
    /// its own revocation (a password one of them chose is cleared too, invitations one of them
    /// made are revoked), audited. A leaked token could otherwise leave behind tokens of its own
    /// that outlive its revocation.
    ///
    /// Only unrevoked tokens are followed: a token revoked earlier had its own revoked with it, and
    /// none is made under a revoked one (``create(name:for:parent:on:)``), so the walk is bounded by
    /// ``maximumLiveTokens``, however many tokens were made and revoked under this one before.
    static func revokeDescendants(of tokenID: UUID, userID: UUID, actor: String, on db: any Database) async throws {
        var parents = [tokenID]
        var seen: Set<UUID> = [tokenID]
        while !parents.isEmpty {
            let children = try await TokenRecord.query(on: db).filter(\.$user.$id == userID).filter(\.$revokedAt == nil)
                .filter(\.$parentTokenID ~~ parents).all()
            parents = []
            for child in children {
                let id = try child.requireID()
                guard seen.insert(id).inserted else { continue }
                parents.append(id)
                try await markRevoked(child, userID: userID, actor: actor, on: db)
                try await Audit.record(on: db, teamID: nil, action: "token.revoke", actor: actor, target: child.name, outcome: "ok",
                                       reason: "made by a token revoked with it")
            }
        }
    }
}
