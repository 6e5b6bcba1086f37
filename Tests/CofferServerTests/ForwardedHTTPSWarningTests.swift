import Foundation
import Testing
import Vapor

@testable import CofferServer

/// Behind a TLS-terminating proxy without COFFER_SECURE_COOKIES, dashboard cookies lack `Secure`
/// and `__Host-`, and answers carry no HSTS: the operator is told once, in the log, by the first
/// request a trusted proxy says came over https.
@Suite("The warning about https behind a proxy")
struct ForwardedHTTPSWarningTests {
    @Test("a trusted proxy's X-Forwarded-Proto: https while secure cookies are off is logged once, naming the setting")
    func loggedOnce() async throws {
        let log = CapturedLog()
        let server = try await Self.start(log) { $0.trustedProxies = "127.0.0.1, ::1" }
        defer { Task { try? await server.stop() } }
        for proto in [nil, "http"] { _ = try await Self.signInPage(server, proto: proto) }
        #expect(Self.warnings(log).isEmpty, "nothing said of https yet")
        for proto in ["https", "HTTPS", "https, http", "https"] { _ = try await Self.signInPage(server, proto: proto) }
        let warnings = Self.warnings(log)
        #expect(warnings.count == 1, "\(warnings.count) warnings")
        #expect(warnings.first?.contains("COFFER_SECURE_COOKIES=1") == true)
    }

    @Test("nothing is logged when the header comes from a peer not trusted, or when secure cookies are on")
    func notLogged() async throws {
        for (proxies, secure) in [(nil, false), ("127.0.0.1, ::1", true)] as [(String?, Bool)] {
            let log = CapturedLog()
            let server = try await Self.start(log) {
                $0.trustedProxies = proxies
                $0.secureCookies = secure
            }
            defer { Task { try? await server.stop() } }
            _ = try await Self.signInPage(server, proto: "https")
            #expect(Self.warnings(log).isEmpty, "proxies \(proxies ?? "none"), secure cookies \(secure)")
        }
    }

    /// A server whose log at `info` and above goes to `log`.
    private static func start(_ log: CapturedLog, adjust: (inout ServerConfiguration) -> Void) async throws -> TestServer {
        let logger = Logger(label: "forwarded-https-test") { _ in
            var handler = CapturingLogHandler(log: log)
            handler.logLevel = .info
            return handler
        }
        return try await TestServer.start(logger: logger, adjust: adjust)
    }

    private static func signInPage(_ server: TestServer, proto: String?) async throws -> HTTP.Reply {
        let browser = Browser(base: server.base)
        if let proto { browser.headers["X-Forwarded-Proto"] = proto }
        return try await browser.get("/dashboard/sign-in")
    }

    private static func warnings(_ log: CapturedLog) -> [String] {
        log.entries.filter { $0.level == .warning && $0.message.contains("X-Forwarded-Proto") }.map(\.message)
    }
}
