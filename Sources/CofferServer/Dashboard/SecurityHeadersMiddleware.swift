import Vapor

/// Security headers on every dashboard response, errors included: a Content-Security-Policy that
/// allows only this server's own stylesheet and scripts (no inline script), forms posting only
/// here, and no framing; no MIME sniffing, no Referer, and pages never stored by caches. When the
/// server is reached over https (secure cookies), `Strict-Transport-Security` too, so a browser
/// that saw the dashboard once never again sends its session cookie's requests over plain http
/// (where a network attacker could answer them first).
struct SecurityHeadersMiddleware: AsyncMiddleware {
    /// One year: browsers remember the host's https for this long after each answer.
    static let strictTransportSecurity = "max-age=31536000"

    /// Whether answers carry `Strict-Transport-Security` (only when served over https).
    let strictTransport: Bool

    static let contentSecurityPolicy = [
        "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
        "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
    ].joined(separator: "; ")

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let response = try await next.respond(to: request)
        let headers = [
            ("Content-Security-Policy", Self.contentSecurityPolicy),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY"),
            ("Cross-Origin-Opener-Policy", "same-origin"),
        ]
        for (name, value) in headers { response.headers.replaceOrAdd(name: name, value: value) }
        if strictTransport { response.headers.replaceOrAdd(name: .strictTransportSecurity, value: Self.strictTransportSecurity) }
        if !response.headers.contains(name: .cacheControl) {
            response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        }
        return response
    }
}
