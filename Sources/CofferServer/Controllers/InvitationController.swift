import Fluent
import Vapor

/// Invitations over the API (``Invitations``).
///
/// - `POST /v1/teams/:team/invitations` (owner): a new invitation; its code is in the answer, once.
///   It hangs on the owner and the token that made it (``InvitationIssuer``).
/// - `GET /v1/teams/:team/invitations` (owner): the team's invitations and their state.
/// - `DELETE /v1/teams/:team/invitations/:invitation` (owner): revokes a pending one.
/// - `POST /v1/invitations/accept` (an API token): the token's account joins the team.
/// - `POST /v1/invitations/redeem` (no token): makes the person's own account, which joins the
///   team, and answers its first API token.
///
/// Unknown, used, revoked and expired codes count against the client address's failure budget
/// (the one wrong API tokens use), checked before any look-up.
struct InvitationController {
    struct CreateInvitation: Content {
        let role: Role
        var note: String?
        /// Days until it expires (default: the server's COFFER_INVITATION_DAYS).
        var days: Double?
    }
    struct AcceptInvitation: Content { let code: String }
    struct RedeemInvitation: Content {
        let code: String
        let name: String
        /// A dashboard sign-in for the new account: both or neither.
        var email: String?
        var password: String?
    }
    struct Redeemed: Content {
        let name: String
        let team: String
        let role: Role
        /// The new account's first API token, made by this request for the person who sent it.
        let token: String
    }

    let lifetime: TimeInterval
    let failures: RateLimiter

    /// The owner-only routes under a team, behind token authentication.
    struct TeamRoutes: RouteCollection {
        let controller: InvitationController
        func boot(routes: any RoutesBuilder) throws {
            let invitations = routes.grouped("v1", "teams", ":team", "invitations")
            invitations.post(use: controller.create)
            invitations.get(use: controller.list)
            invitations.delete(":invitation", use: controller.revoke)
            routes.post("v1", "invitations", "accept", use: controller.accept)
        }
    }

    /// The route that needs no token.
    struct PublicRoutes: RouteCollection {
        let controller: InvitationController
        func boot(routes: any RoutesBuilder) throws {
            routes.post("v1", "invitations", "redeem", use: controller.redeem)
        }
    }

    func create(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .owner)
        let body = try req.content.decode(CreateInvitation.self)
        var days = lifetime
        if let value = body.days {
            guard value.isFinite, value > 0, value <= 365 else { throw APIError.invalid("days must be more than 0 and at most 365") }
            days = value * 86_400
        }
        let issuer = try InvitationIssuer.api(req)
        return try await Invitations.create(in: team, role: body.role, note: body.note ?? "", lifetime: days, by: issuer, on: req.db)
            .encodeResponse(status: .created, for: req)
    }

    func list(req: Request) async throws -> [Invitations.View] {
        let (team, _) = try await req.team(requiring: .owner)
        return try await Invitations.list(in: team, on: req.db)
    }

    func revoke(req: Request) async throws -> HTTPStatus {
        let (team, _) = try await req.team(requiring: .owner)
        guard let id = req.parameters.get("invitation", as: UUID.self) else { throw APIError.notFound("invitation") }
        try await Invitations.revoke(id, in: team, actor: try req.user().name, on: req.db)
        return .noContent
    }

    func accept(req: Request) async throws -> Invitations.Joined {
        let user = try req.user()
        let body = try req.content.decode(AcceptInvitation.self)
        return try await failures.redeeming(req) { try await Invitations.accept(body.code, userID: user.userID, name: user.name, on: req.db) }
    }

    func redeem(req: Request) async throws -> Response {
        let body = try req.content.decode(RedeemInvitation.self)
        guard (body.email == nil) == (body.password == nil) else { throw APIError.invalid("give both email and password, or neither") }
        let redeemed: Redeemed = try await failures.redeeming(req) {
            try Names.validate(body.name, what: "account name")
            var email: String?, hash: String?
            do {
                email = try body.email.map(Credentials.email)
                try await Invitations.check(body.code, name: body.name, email: email, on: req.db)
                if let password = body.password {
                    hash = try await req.passwordHashing.hash(try Credentials.password(password))
                }
            } catch DashboardError.invalidForm(let reason) {
                throw APIError.invalid(reason)
            }
            let (joined, _, token) = try await Invitations.redeem(body.code, name: body.name, email: email, passwordHash: hash, on: req.db)
            return Redeemed(name: body.name, team: joined.team, role: joined.role, token: token ?? "")
        }
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return try await redeemed.encodeResponse(status: .created, headers: headers, for: req)
    }
}
