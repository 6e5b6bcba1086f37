@testable import CofferServer
import Foundation
import Testing

/// The dashboard's cookies when the server is reached over https. They were `coffer_session` and
/// `coffer_csrf` whatever the scheme, so a page on a sibling subdomain (or a network attacker on
/// plain http) could plant its own with `Domain=` the parent: a planted session cookie signed the
/// victim into the attacker's account, a planted CSRF cookie let it forge a sign-in ("cookie
/// tossing"). With secure cookies they are `__Host-` cookies, which a browser takes only from this
/// host over https, with `Path=/` and no `Domain`; the plain names are no longer read.
@Suite("Dashboard cookies with secure cookies on")
struct HostCookieTests {
    @Test("__Host- names with Secure, Path=/ and no Domain; a planted plain-named session or CSRF cookie signs no one in")
    func hostPrefixedCookies() async throws {
        let server = try await TestServer.start { $0.secureCookies = true }
        defer { Task { try? await server.stop() } }
        let owner = Browser(base: server.base)
        let form = try await owner.get("/dashboard/setup")
        let formCookie = try #require(form.header("Set-Cookie"))
        #expect(formCookie.hasPrefix("__Host-coffer_csrf="), "\(formCookie)")
        for attribute in ["Secure", "Path=/", "HttpOnly", "SameSite=Strict"] { #expect(formCookie.contains(attribute), "\(formCookie)") }
        #expect(!formCookie.lowercased().contains("domain="))

        let done = try await owner.post("/dashboard/setup", ["token": server.adminToken, "email": DashboardTests.ownerEmail, "password": DashboardTests.password])
        #expect(done.status == 303, "\(done.html)")
        let session = try #require(owner.cookies["__Host-coffer_session"])
        #expect(owner.cookies["coffer_session"] == nil)
        #expect(try await owner.get("/dashboard").status == 200)

        // The same session token under the plain name, as a sibling subdomain would plant it: not read.
        let planted = Browser(base: server.base)
        planted.setCookie("coffer_session", session)
        #expect(try await planted.get("/dashboard").location == "/dashboard/sign-in")
        // A sign-in forged with a planted plain-named CSRF cookie is refused as a forgery…
        let forger = Browser(base: server.base)
        let token = String(repeating: "k", count: 32)
        forger.setCookie("coffer_csrf", token)
        let forged = try await forger.post("/dashboard/sign-in", ["email": DashboardTests.ownerEmail, "password": DashboardTests.password], csrf: token)
        #expect(forged.status == 403, "\(forged.status)")
        #expect(forger.cookies["__Host-coffer_session"] == nil)
        // …while the host-only cookie of this host's own form is the one that counts.
        let own = Browser(base: server.base)
        own.setCookie("__Host-coffer_csrf", token)
        let signedIn = try await own.post("/dashboard/sign-in", ["email": DashboardTests.ownerEmail, "password": DashboardTests.password], csrf: token)
        #expect(signedIn.status == 303, "\(signedIn.status) \(signedIn.html.prefix(300))")
        #expect(own.cookies["__Host-coffer_session"] != nil)
    }
}
