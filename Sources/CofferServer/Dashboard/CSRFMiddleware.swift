import Vapor

/// Refuses every dashboard POST whose CSRF token is not the CSRF token of the browser's session,
/// or before sign-in, of the pre-sign-in cookie set with the form (`coffer_csrf`,
/// `__Host-coffer_csrf` with secure cookies; double submit). Compared in constant time. A forged
/// form from another site has neither.
///
/// The token comes in the `csrf` form field, or from the dashboard's own script in the
/// `X-CSRF-Token` header (another site cannot set that header without a CORS preflight, which this
/// server never grants). A `multipart/form-data` form is refused, except on the routes that read
/// one as it streams (``streamedForms``, the model upload without JavaScript): the field is inside a
/// body not yet read, so the middleware hands the expected token on in ``DeferredCSRF`` and the
/// route's reader checks the field before it keeps any byte of a file (``MultipartModelForm``).
struct CSRFMiddleware: AsyncMiddleware {
    /// The form field that carries the token.
    static let field = "csrf"
    /// The header that carries the token from the dashboard's script.
    static let header = "X-CSRF-Token"

    /// The largest form body read to find the token (the largest dashboard form, the deployment form, takes 64 KB).
    static let maximumFormBytes = 64 * 1024

    /// The names of the browser's cookies (``DashboardSessions/preSessionCookieName``).
    let sessions: DashboardSessions
    /// Whether the routes behind read streamed multipart forms and check their `csrf` field themselves.
    var streamedForms = false

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard request.method == .POST else { return try await next.respond(to: request) }
        guard let expected = expected(request) else { throw DashboardError.csrfRefused }
        if let presented = request.headers.first(name: Self.header) {
            guard Self.matches(presented, expected) else { throw DashboardError.csrfRefused }
        } else if request.headers.contentType?.type == "multipart" {
            guard streamedForms, request.headers.contentType?.subType == "form-data" else { throw DashboardError.csrfRefused }
            request.storage[DeferredCSRF.self] = expected
        } else {
            // A form larger than the first read arrives as a stream that the route would collect
            // later: collect it here (bounded as the largest dashboard form), or the field is missing.
            if request.body.data == nil {
                do { _ = try await request.body.collect(max: Self.maximumFormBytes).get() } catch {
                    throw DashboardError.invalidForm("This form is larger than \(Self.maximumFormBytes / 1024) KB.")
                }
            }
            guard let presented = try? request.content.get(String.self, at: Self.field), Self.matches(presented, expected)
            else { throw DashboardError.csrfRefused }
        }
        return try await next.respond(to: request)
    }

    /// The token this browser's forms must carry, if it has one.
    func expected(_ request: Request) -> String? {
        let expected = request.auth.get(DashboardSession.self)?.csrfToken
            ?? request.cookies[sessions.preSessionCookieName]?.string
        guard let expected, !expected.isEmpty else { return nil }
        return expected
    }

    /// Whether `presented` is `expected`, in constant time (bounded length first).
    static func matches(_ presented: String, _ expected: String) -> Bool {
        presented.utf8.count <= 100 && Secrets.equal(presented, expected)
    }
}

/// The CSRF token a streamed multipart form must carry in its `csrf` field, checked by the route.
enum DeferredCSRF: StorageKey {
    typealias Value = String
}
