import Fluent
import Vapor

/// The signed-in browser behind a request: its session row's ID and the CSRF token its forms carry.
struct DashboardSession: Authenticatable {
    let sessionID: UUID
    let userID: UUID
    let name: String
    let csrfToken: String
}

/// Starting, finding and ending browser sessions. The cookie carries a random 256-bit token; the
/// database keeps only its SHA-256, so a copy of the database signs no one in.
struct DashboardSessions: Sendable {
    let lifetime: TimeInterval
    let secureCookies: Bool

    /// The session cookie's name. With secure cookies, `__Host-coffer_session`: a browser takes a
    /// `__Host-` cookie only from this host over https, with `Path=/` and no `Domain`, so a sibling
    /// subdomain (or a network attacker on plain http) cannot plant one — "cookie tossing" that
    /// would sign the victim into the attacker's account, or shadow the victim's own session.
    var cookieName: String { secureCookies ? "__Host-coffer_session" : "coffer_session" }
    /// The cookie that carries the CSRF token of forms shown before sign-in (`__Host-` likewise:
    /// planted, it would let a sibling subdomain forge a sign-in into the attacker's account).
    var preSessionCookieName: String { secureCookies ? "__Host-coffer_csrf" : "coffer_csrf" }

    /// Signs `userID` in: stores a new session and returns the cookie to set. Sessions that expired
    /// without being used again are removed here, so the table does not grow without end.
    func start(for userID: UUID, on db: any Database) async throws -> HTTPCookies.Value {
        let now = Date()
        try await SessionRecord.query(on: db).filter(\.$expiresAt < now).delete()
        let token = Secrets.make(prefix: "cfs_")
        let expires = now.addingTimeInterval(lifetime)
        try await SessionRecord(userID: userID, tokenHash: Secrets.hash(token), csrfToken: Secrets.make(prefix: ""), expiresAt: expires)
            .create(on: db)
        return cookie(token, expires: expires)
    }

    /// The live session whose token is `token`, if any; removes it when it has expired.
    func find(_ token: String, on db: any Database) async throws -> (SessionRecord, UserRecord)? {
        guard token.count <= 100,
              let row = try await SessionRecord.query(on: db).filter(\.$tokenHash == Secrets.hash(token)).with(\.$user).first()
        else { return nil }
        guard row.expiresAt > Date() else {
            try await row.delete(on: db)
            return nil
        }
        return (row, row.user)
    }

    /// Signs a browser out: the session row goes, so the cookie is worthless even if kept.
    func end(_ sessionID: UUID, on db: any Database) async throws {
        try await SessionRecord.query(on: db).filter(\.$id == sessionID).delete()
    }

    /// Signs every browser of `userID` out (a password changed or taken back).
    static func endAll(of userID: UUID, on db: any Database) async throws {
        try await SessionRecord.query(on: db).filter(\.$user.$id == userID).delete()
    }

    /// A cookie: HttpOnly, SameSite=Strict, Path=/, Secure when the server is reached over https.
    func cookie(_ value: String, expires: Date?) -> HTTPCookies.Value {
        HTTPCookies.Value(string: value, expires: expires, maxAge: nil, domain: nil, path: "/",
                          isSecure: secureCookies, isHTTPOnly: true, sameSite: .strict)
    }

    /// A cookie that makes the browser forget one it holds.
    func expired() -> HTTPCookies.Value {
        HTTPCookies.Value(string: "", expires: Date(timeIntervalSince1970: 0), maxAge: 0, domain: nil, path: "/",
                          isSecure: secureCookies, isHTTPOnly: true, sameSite: .strict)
    }
}

extension DashboardSessions {
    /// Starts a session for `user` and sends the browser to `path` with its cookie (the pre-sign-in
    /// CSRF cookie is dropped).
    func signedIn(_ req: Request, user: UserRecord, to path: String) async throws -> Response {
        let cookie = try await start(for: user.requireID(), on: req.db)
        let response = req.seeOther(path)
        response.cookies[cookieName] = cookie
        response.cookies[preSessionCookieName] = expired()
        return response
    }
}
