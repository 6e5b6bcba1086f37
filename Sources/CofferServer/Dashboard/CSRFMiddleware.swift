import Vapor

/// Refuses every dashboard POST whose `csrf` form field is not the CSRF token of the browser's
/// session, or before sign-in, of the `coffer_csrf` cookie set with the form (double submit).
/// Compared in constant time. A forged form from another site has neither.
struct CSRFMiddleware: AsyncMiddleware {
    /// The form field that carries the token.
    static let field = "csrf"

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard request.method == .POST else { return try await next.respond(to: request) }
        let expected = request.auth.get(DashboardSession.self)?.csrfToken
            ?? request.cookies[DashboardSessions.preSessionCookieName]?.string
        guard let expected, !expected.isEmpty,
              let presented = try? request.content.get(String.self, at: Self.field), presented.count <= 100,
              Secrets.equal(presented, expected)
        else { throw DashboardError.csrfRefused }
        return try await next.respond(to: request)
    }
}
