import Fluent
import Vapor

/// Reads the session cookie and, for a live session, logs in both the ``DashboardSession`` and the
/// ``AuthenticatedUser`` that the API's role checks (`Request.team(requiring:)`) read: the
/// dashboard enforces exactly the API's roles because it runs the same checks.
///
/// Bearer tokens are not read here: the dashboard is for browsers only.
struct SessionAuthenticator: AsyncMiddleware {
    let sessions: DashboardSessions

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if let token = request.cookies[sessions.cookieName]?.string, !token.isEmpty,
           let found = try await sessions.find(token, on: request.db) {
            let (session, user) = found
            let sessionID = try session.requireID(), userID = try user.requireID()
            request.auth.login(DashboardSession(sessionID: sessionID, userID: userID, name: user.name, csrfToken: session.csrfToken))
            request.auth.login(AuthenticatedUser(userID: userID, name: user.name, tokenID: sessionID))
        }
        return try await next.respond(to: request)
    }
}

extension Request {
    /// The signed-in browser, or a redirect to the sign-in page.
    func dashboardSession() throws -> DashboardSession {
        guard let session = auth.get(DashboardSession.self) else { throw DashboardError.signInRequired }
        return session
    }
}
