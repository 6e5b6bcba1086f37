import Fluent
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
        return try await Self.create(name: body.name, for: try req.user(), on: req.db).encodeResponse(status: .created, for: req)
    }

    /// Makes a named token for `user`; the answer carries its value, the only time it is shown.
    static func create(name: String, for user: AuthenticatedUser, on db: any Database) async throws -> CreatedToken {
        try Names.validate(name, what: "token name")
        // The token and its audit row are one transaction: no token exists that was not audited
        // and shown.
        let (record, secret) = try await db.transaction { db in
            let issued = try await Self.issue(for: user.userID, name: name, on: db)
            try await Audit.record(on: db, teamID: nil, action: "token.create", actor: user.name, target: name, outcome: "ok")
            return issued
        }
        return CreatedToken(id: try record.requireID(), name: record.name, token: secret, prefix: record.prefix)
    }

    /// Makes a token for a user; returns the record and the secret (to show once).
    static func issue(for userID: UUID, name: String, on db: any Database, secret: String? = nil) async throws -> (TokenRecord, String) {
        let secret = secret ?? Secrets.make(prefix: "cft_")
        let record = TokenRecord(userID: userID, name: name, tokenHash: Secrets.hash(secret), prefix: String(secret.prefix(10)))
        try await record.create(on: db)
        return (record, secret)
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
        try await req.db.transaction { db in
            if token.revokedAt == nil {
                token.revokedAt = Date()
                try await token.update(on: db)
                try await PasswordToken.tokenRevoked(try token.requireID(), of: user.userID, actor: user.name, on: db)
            }
            try await Audit.record(on: db, teamID: nil, action: "token.revoke", actor: user.name, target: token.name, outcome: "ok")
        }
        return .noContent
    }
}
