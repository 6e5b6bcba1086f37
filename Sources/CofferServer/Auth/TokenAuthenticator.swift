import Fluent
import Vapor

/// The user behind a valid, unrevoked API token, or behind a live dashboard session.
struct AuthenticatedUser: Authenticatable {
    let userID: UUID
    let name: String
    /// The API token used, or for a browser the dashboard session.
    let tokenID: UUID
}

/// Looks up `Authorization: Bearer <token>` by the token's hash; records when it was last used.
///
/// A client address that sent more than its budget of unknown or revoked tokens in a minute
/// (``failures``) is answered 429 before any look-up, until the minute is over — unless the token
/// authenticated on this instance lately (``RecentTokens``): a person behind the same address as a
/// flood of wrong credentials keeps working.
struct TokenAuthenticator: AsyncBearerAuthenticator {
    /// Failed attempts per client address.
    let failures: RateLimiter
    /// Tokens that authenticated lately, by hash.
    let recent: RecentTokens

    func authenticate(bearer: BearerAuthorization, for request: Request) async throws {
        let address = "address:" + AddressBudget.key(request.clientAddress)
        let hash = Secrets.hash(bearer.token)
        if let wait = failures.exhausted(address), !recent.vouches(for: hash) { throw Self.tooMany(wait) }
        guard let token = try await TokenRecord.query(on: request.db)
            .filter(\.$tokenHash == hash)
            .filter(\.$revokedAt == nil)
            .with(\.$user)
            .first(),
            let tokenID = token.id
        else {
            recent.forget(hash)
            _ = failures.acquire(address)
            return
        }
        recent.succeeded(hash)
        token.lastUsedAt = Date()
        try await token.update(on: request.db)
        request.auth.login(AuthenticatedUser(userID: try token.user.requireID(), name: token.user.name, tokenID: tokenID))
    }
}

extension TokenAuthenticator {
    /// 429 with the seconds to wait, for a client address past its failure budget.
    static func tooMany(_ wait: Int) -> APIError {
        APIError(.tooManyRequests, "rate_limited", "too many failed attempts from this address; retry in \(wait) s",
                 headers: ["Retry-After": "\(wait)"])
    }
}

extension Request {
    /// The authenticated user, or 401.
    func user() throws -> AuthenticatedUser {
        guard let user = auth.get(AuthenticatedUser.self) else { throw APIError.unauthorized() }
        return user
    }

    /// The team named by the `team` path parameter, if the user has at least `role` in it.
    ///
    /// 404 when the team does not exist, 403 `not_a_member` or `role_required` otherwise.
    func team(requiring role: Role) async throws -> (TeamRecord, Role) {
        let user = try user()
        guard let name = parameters.get("team"),
              let team = try await TeamRecord.query(on: db).filter(\.$name == name).first()
        else { throw APIError.notFound("team") }
        guard let membership = try await MembershipRecord.query(on: db)
            .filter(\.$team.$id == team.requireID())
            .filter(\.$user.$id == user.userID)
            .first()
        else { throw APIError.forbidden("not_a_member", "you are not a member of team \(team.name)") }
        guard membership.role >= role else {
            throw APIError.forbidden("role_required", "this needs the \(role.rawValue) role in team \(team.name)")
        }
        return (team, membership.role)
    }
}
