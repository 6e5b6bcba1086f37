import NIOConcurrencyHelpers
import Vapor

/// Says once, in the log, that browsers reach the dashboard over https while its cookies are made
/// for plain http.
///
/// Secure cookies are on only with an `https://` COFFER_PUBLIC_URL or COFFER_SECURE_COOKIES=1.
/// Behind a TLS-terminating proxy left without either, dashboard cookies lack `Secure` and the
/// `__Host-` prefix, and answers carry no `Strict-Transport-Security`, though every browser uses
/// https. A trusted proxy (COFFER_TRUSTED_PROXIES) says so with `X-Forwarded-Proto: https`: the
/// first such request is logged as a warning naming the setting, once for the application (in
/// `coffer-server`, once for the process), never per request. The header is not believed from
/// anyone else, and it turns nothing on by itself: a proxy may pass on what a client wrote.
/// Installed only while secure cookies are off.
final class ForwardedHTTPSWarning: AsyncMiddleware, Sendable {
    static let message = "a trusted proxy forwarded a dashboard request made over https (X-Forwarded-Proto), but secure "
        + "cookies are off: dashboard cookies lack Secure and the __Host- prefix, and answers carry no "
        + "Strict-Transport-Security. Set COFFER_SECURE_COOKIES=1 (or an https:// COFFER_PUBLIC_URL)"

    private let warned = NIOLockedValueBox(false)

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if Self.forwardedOverHTTPS(request), warned.withLockedValue({ done in defer { done = true }; return !done }) {
            request.logger.warning("\(Self.message)")
        }
        return try await next.respond(to: request)
    }

    /// Whether `request` came from a trusted proxy whose `X-Forwarded-Proto` says the browser used
    /// https (its first entry, which the outermost proxy wrote, when proxies chain).
    static func forwardedOverHTTPS(_ request: Request) -> Bool {
        guard let forwarded = request.headers.first(name: "X-Forwarded-Proto"),
              forwarded.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).lowercased() == "https",
              let peer = request.remoteAddress?.ipAddress, let address = IPRange.address(peer)
        else { return false }
        return request.application.trustedProxies.trusts(address)
    }
}
