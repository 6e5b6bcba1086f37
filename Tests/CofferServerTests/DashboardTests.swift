import Fluent
import Foundation
import Testing

@testable import CofferServer

/// The dashboard over real HTTP: set-up, sign-in and sessions, CSRF, security headers, roles and
/// escaping. The browser tests (tools/browser) drive the same pages in Chromium.
@Suite("Dashboard")
struct DashboardTests {
    static let ownerEmail = "owner@example.com"
    static let password = "correct horse battery"

    /// A server whose first owner has set up the dashboard, and that owner's browser.
    static func ownerBrowser(_ server: TestServer) async throws -> Browser {
        let browser = Browser(base: server.base)
        _ = try await browser.get("/dashboard/setup")
        let reply = try await browser.post("/dashboard/setup", ["token": server.adminToken, "email": ownerEmail, "password": password])
        #expect(reply.status == 303, "\(reply.html)")
        _ = try await browser.get("/dashboard")
        return browser
    }

    @Test("the first owner sets up with the bootstrap token; then the page is gone and sign-in works")
    func setupAndSignIn() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let browser = Browser(base: server.base)
        #expect(try await browser.get("/dashboard").location == "/dashboard/sign-in")
        #expect(try await browser.get("/dashboard/sign-in").location == "/dashboard/setup")
        let form = try await browser.get("/dashboard/setup")
        #expect(form.status == 200)
        #expect(form.html.contains("<label for=\"token\">"))

        let wrong = try await browser.post("/dashboard/setup", ["token": "cft_guess", "email": Self.ownerEmail, "password": Self.password])
        #expect(wrong.status == 403)
        #expect(wrong.html.contains("not the bootstrap token"))
        #expect(!wrong.html.contains("cft_guess"))
        #expect(browser.cookies["coffer_session"] == nil)

        let short = try await browser.post("/dashboard/setup", ["token": server.adminToken, "email": Self.ownerEmail, "password": "short"])
        #expect(short.status == 400)
        #expect(short.html.contains("12 to 72 characters"))

        let done = try await browser.post("/dashboard/setup", ["token": server.adminToken, "email": Self.ownerEmail, "password": Self.password])
        #expect(done.status == 303)
        #expect(done.location == "/dashboard")
        let home = try await browser.get("/dashboard")
        #expect(home.status == 200)
        #expect(home.html.contains("admin"))
        #expect(try await browser.get("/dashboard/setup").status == 404)
        #expect(try await Browser(base: server.base).post("/dashboard/setup", ["token": server.adminToken, "email": "x@example.com", "password": Self.password]).status == 403)

        // Sign out: the session is gone on the server, not only in the browser.
        let session = try #require(browser.cookies["coffer_session"])
        let out = try await browser.post("/dashboard/sign-out", [:])
        #expect(out.status == 303)
        #expect(try await Self.withSession(session, server).get("/dashboard").location == "/dashboard/sign-in")

        // One message for an unknown address and a wrong password.
        let unknown = try await Browser(base: server.base).signIn("nobody@example.com", Self.password)
        let mistyped = try await Browser(base: server.base).signIn(Self.ownerEmail, "not the password at all")
        #expect(unknown.status == 401)
        #expect(mistyped.status == 401)
        #expect(unknown.html.contains("The email address or the password is not right."))
        #expect(mistyped.html.contains("The email address or the password is not right."))
        let again = Browser(base: server.base)
        #expect(try await again.signIn(Self.ownerEmail.uppercased(), Self.password).status == 303)
        #expect(try await again.get("/dashboard").status == 200)
    }

    @Test("the session cookie is HttpOnly, SameSite=Strict, Path=/, Secure only when asked; the database keeps its hash")
    func cookieAttributes() async throws {
        for secure in [false, true] {
            let server = try await TestServer.start { $0.secureCookies = secure }
            defer { Task { try? await server.stop() } }
            let browser = Browser(base: server.base)
            _ = try await browser.get("/dashboard/setup")
            let reply = try await browser.post("/dashboard/setup", ["token": server.adminToken, "email": Self.ownerEmail, "password": Self.password])
            let header = try #require(reply.header("Set-Cookie"))
            let start = try #require(header.range(of: "coffer_session="))
            let cookie = String(header[start.lowerBound...]).components(separatedBy: "coffer_csrf=")[0]
            #expect(cookie.contains("HttpOnly"), "\(cookie)")
            #expect(cookie.contains("SameSite=Strict"), "\(cookie)")
            #expect(cookie.contains("Path=/"), "\(cookie)")
            #expect(cookie.contains("Secure") == secure, "\(cookie)")
            // With secure cookies the name is host-only (HostCookieTests).
            #expect(header.contains("__Host-coffer_session=") == secure, "\(header)")
            let value = try #require(browser.cookies[secure ? "__Host-coffer_session" : "coffer_session"])
            #expect(value.count >= 40)
            let database = try Data(contentsOf: URL(fileURLWithPath: server.dataDirectory + "/coffer.sqlite"))
            #expect(database.range(of: Data(value.utf8)) == nil, "the session token itself is in the database")
        }
    }

    @Test("a member changes their password: the current one is asked, every session ends (a copy of this browser's cookie too) and this browser gets a new one")
    func changePassword() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let browser = try await Self.ownerBrowser(server)
        let other = Browser(base: server.base)
        #expect(try await other.signIn(Self.ownerEmail, Self.password).status == 303)
        // A copy of this browser's own cookie (malware, a shared computer): changing the password is
        // the remedy, so the change must end that session too.
        let copy = Browser(base: server.base)
        copy.headers["Cookie"] = browser.cookieHeader
        #expect(try await copy.get("/dashboard").status == 200)
        let page = try await browser.get("/dashboard/account")
        #expect(page.status == 200)
        #expect(page.html.contains(Self.ownerEmail))
        let wrong = try await browser.post("/dashboard/account/password", ["current": "not it at all", "password": "a brand new password"])
        #expect(wrong.status == 400)
        #expect(wrong.html.contains("The current password is not right."))
        let short = try await browser.post("/dashboard/account/password", ["current": Self.password, "password": "short"])
        #expect(short.status == 400)
        #expect(try await browser.post("/dashboard/account/password", ["current": Self.password, "password": "a brand new password"], csrf: .some(nil)).status == 403)
        let done = try await browser.post("/dashboard/account/password", ["current": Self.password, "password": "a brand new password"])
        #expect(done.status == 303)
        #expect(try await browser.get("/dashboard/account?changed=1").html.contains("Your password is changed"))
        #expect(try await other.get("/dashboard").location == "/dashboard/sign-in")
        #expect(try await copy.get("/dashboard").location == "/dashboard/sign-in")
        #expect(try await Browser(base: server.base).signIn(Self.ownerEmail, Self.password).status == 401)
        #expect(try await Browser(base: server.base).signIn(Self.ownerEmail, "a brand new password").status == 303)
    }

    @Test("a password chosen with a leaked API token is taken back when the token is revoked: sessions end, sign-in fails, welcome works again with another token")
    func welcomeTokenRevoked() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        _ = try await Self.ownerBrowser(server)
        // An account made with an invitation through the API: a token, no password. The token
        // leaks, and whoever holds it chooses the account's email and password.
        let vera = try await flowers.world.member("vera", role: "viewer", in: "T")
        let leaked = try #require(vera.token)
        let thief = Browser(base: server.base)
        #expect(try await thief.welcome(token: leaked, email: "thief@example.com", password: Self.password).status == 303)
        #expect(try await thief.get("/dashboard").status == 200)
        // Another token of the same account, not made with the leaked one (say, from a second
        // invitation), stays valid; one the thief made with the leaked token goes with it.
        let veraID = try #require(try await UserRecord.query(on: server.app.db).filter(\.$name == "vera").first()?.requireID())
        let spareToken = try await TokenController.issue(for: veraID, name: "spare", on: server.app.db).1
        let minted = try await vera.call("POST", "/v1/tokens", json: ["name": "thief-own"])
        #expect(minted.status == 201)
        let mintedToken = try #require(minted.object["token"] as? String)
        let grandchild = try await HTTP(base: server.base, token: mintedToken).call("POST", "/v1/tokens", json: ["name": "and-its-own"])
        let grandchildToken = try #require(grandchild.object["token"] as? String)

        // The owner of the account revokes the leaked token: the password it chose goes with it,
        // and so do the tokens made with it, and theirs.
        let leakedID = try #require(try await vera.call("GET", "/v1/tokens").array.first { ($0["name"] as? String) == "first token" }?["id"] as? String)
        #expect(try await HTTP(base: server.base, token: spareToken).call("DELETE", "/v1/tokens/\(leakedID)").status == 204)
        #expect(try await HTTP(base: server.base, token: mintedToken).call("GET", "/v1/tokens").status == 401)
        #expect(try await HTTP(base: server.base, token: grandchildToken).call("GET", "/v1/tokens").status == 401)
        #expect(try await HTTP(base: server.base, token: spareToken).call("GET", "/v1/tokens").status == 200)
        #expect(try await thief.get("/dashboard").location == "/dashboard/sign-in")
        #expect(try await Browser(base: server.base).signIn("thief@example.com", Self.password).status == 401)
        let audited = try await AuditRecord.query(on: server.app.db).filter(\.$action == "dashboard.password-cleared").all()
        #expect(audited.map(\.target) == ["vera"])

        // The account's holder chooses their own with the token they still have; revoking a token
        // that chose no password changes nothing.
        let owner = Browser(base: server.base)
        #expect(try await owner.welcome(token: spareToken, email: "vera@example.com", password: Self.password).status == 303)
        let other = try await HTTP(base: server.base, token: spareToken).call("POST", "/v1/tokens", json: ["name": "ci"])
        let otherID = try #require(other.object["id"] as? String)
        #expect(try await HTTP(base: server.base, token: spareToken).call("DELETE", "/v1/tokens/\(otherID)").status == 204)
        #expect(try await owner.get("/dashboard").status == 200)
        #expect(try await Browser(base: server.base).signIn("vera@example.com", Self.password).status == 303)
    }

    @Test("an unknown dashboard address is the dashboard's Not found page; the API's stay JSON")
    func unknownPages() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let browser = try await Self.ownerBrowser(server)
        for path in ["/dashboard/no-such-page", "/dashboard/teams/T/no-such-tab/deeper", "/dashboard/assets/missing.js"] {
            let reply = try await browser.get(path)
            #expect(reply.status == 404, "\(path)")
            #expect(reply.header("Content-Type")?.hasPrefix("text/html") == true, "\(path)")
            #expect(reply.html.contains("There is no such page."), "\(path)")
        }
        #expect(try await Browser(base: server.base).get("/dashboard/no-such-page").status == 404)
        #expect(try await browser.get("/dashboard/assets/dashboard.css").status == 200)
        let api = try await browser.get("/v1/no-such-route")
        #expect(api.status == 404)
        #expect(api.header("Content-Type")?.hasPrefix("application/json") == true)
    }

    @Test("sign-in attempts are limited per client address")
    func rateLimit() async throws {
        // The budget is 4 in the minute from the first attempt; a run that takes longer is repeated.
        let (statuses, limited) = try await TestServer.withinAMinute(adjust: { $0.signInAttemptsPerMinute = 4 }) { server in
            _ = try await Self.ownerBrowser(server)  // one attempt: the set-up
            var statuses: [Int] = []
            for _ in 0..<4 {
                statuses.append(try await Browser(base: server.base).signIn(Self.ownerEmail, "a wrong password, surely").status)
            }
            let limited = try await Browser(base: server.base).signIn(Self.ownerEmail, Self.password)
            return (statuses, limited)
        }
        #expect(statuses == [401, 401, 401, 429], "\(statuses)")
        #expect(limited.status == 429)
        #expect(limited.html.contains("Too many attempts"))
    }

    @Test("a session lasts the configured lifetime and ends when it expires")
    func expiry() async throws {
        // The clock is not waited on: how long a loaded CI machine takes from sign-in to the first
        // page is not the server's lifetime. The row's end is checked against the lifetime, then
        // moved into the past, as the passing of that lifetime would.
        let lifetime: TimeInterval = 3600
        let server = try await TestServer.start { $0.sessionLifetime = lifetime }
        defer { Task { try? await server.stop() } }
        let before = Date()
        let browser = try await Self.ownerBrowser(server)
        let after = Date()
        #expect(try await browser.get("/dashboard").status == 200)
        let rows = try await CofferServer.SessionRecord.query(on: server.app.db).all()
        #expect(rows.count == 1, "\(rows.count) sessions")
        let row = try #require(rows.first)
        #expect(row.expiresAt >= before.addingTimeInterval(lifetime - 1) && row.expiresAt <= after.addingTimeInterval(lifetime + 1),
                "\(row.expiresAt) for a sign-in between \(before) and \(after)")

        row.expiresAt = Date().addingTimeInterval(-1)
        try await row.save(on: server.app.db)
        #expect(try await browser.get("/dashboard").location == "/dashboard/sign-in")
        #expect(try await CofferServer.SessionRecord.query(on: server.app.db).count() == 0, "an expired session is removed when presented")
        let again = Browser(base: server.base)
        #expect(try await again.signIn(Self.ownerEmail, Self.password).status == 303)
        #expect(try await again.get("/dashboard").status == 200)
    }

    @Test("every dashboard response carries the security headers; pages are not stored")
    func securityHeaders() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let browser = try await Self.ownerBrowser(server)
        for path in ["/dashboard", "/dashboard/sign-in", "/dashboard/signing-key", "/dashboard/teams/none/collections/none"] {
            let reply = try await browser.get(path)
            let policy = try #require(reply.header("Content-Security-Policy"), "\(path)")
            #expect(policy.contains("default-src 'self'"))
            #expect(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"))
            #expect(policy.contains("form-action 'self'"))
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(reply.header("X-Content-Type-Options") == "nosniff")
            #expect(reply.header("Referrer-Policy") == "no-referrer")
            #expect(reply.header("X-Frame-Options") == "DENY")
            #expect(reply.header("Cache-Control") == "no-store", "\(path)")
        }
        #expect(try await browser.get("/dashboard/teams/none/collections/none").status == 404)
        let css = try await browser.get("/dashboard/assets/dashboard.css")
        #expect(css.status == 200)
        #expect(css.header("Content-Type")?.hasPrefix("text/css") == true)
        #expect(css.header("X-Content-Type-Options") == "nosniff")
    }

    @Test("a form without this session's CSRF token is refused and changes nothing")
    func csrf() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("M")
        let browser = try await Self.ownerBrowser(server)
        let fields = ["identifier": "forged", "models": "A"]
        let missing = try await browser.post("/dashboard/teams/M/collections", fields, csrf: .some(nil))
        #expect(missing.status == 403)
        #expect(missing.html.contains("security token"))
        #expect(try await browser.post("/dashboard/teams/M/collections", fields, csrf: "not-the-token").status == 403)
        // Another browser's valid token is not this session's.
        let other = Browser(base: server.base)
        _ = try await other.get("/dashboard/sign-in")
        #expect(try await browser.post("/dashboard/teams/M/collections", fields, csrf: .some(other.csrf)).status == 403)
        #expect(try await world.admin.call("GET", "/v1/teams/M/collections/forged").status == 404)
        // Sign-out is a form too.
        #expect(try await browser.post("/dashboard/sign-out", [:], csrf: .some(nil)).status == 403)
        #expect(try await browser.get("/dashboard").status == 200)
        // Sign-in without the sign-in page's token.
        let cold = Browser(base: server.base)
        #expect(try await cold.post("/dashboard/sign-in", ["email": Self.ownerEmail, "password": Self.password], csrf: .some(nil)).status == 403)

        let made = try await browser.post("/dashboard/teams/M/collections", fields)
        #expect(made.status == 303)
        #expect(made.location == "/dashboard/teams/M/collections/forged")
        #expect(try await world.admin.call("GET", "/v1/teams/M/collections/forged").status == 200)
    }

    @Test("a viewer sees collections and deployments but gets no change forms, and a change is refused")
    func viewerSQLite() async throws { try await Self.viewer(.sqlite) }

    @Test("the same over PostgreSQL (sessions, accounts, roles)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func viewerPostgres() async throws { try await Self.viewer(.postgres) }

    static func viewer(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let a = try await flowers.upload("a"), b = try await flowers.upload("b")
        let first = try #require(try await flowers.deployment("first", models: ["FlowerClassifier": a, "FlowerStylizer": b]).id)
        #expect(try await flowers.activate(first).status == 200)
        let second = try #require(try await flowers.deployment("second", models: ["FlowerClassifier": b, "FlowerStylizer": a]).id)
        let viewerToken = try #require(try await flowers.world.member("vera", role: "viewer", in: "T").token)
        let developerToken = try #require(try await flowers.world.member("dev", role: "developer", in: "T").token)
        _ = try await Self.ownerBrowser(server)

        let viewer = Browser(base: server.base)
        #expect(try await viewer.welcome(token: viewerToken, email: "vera@example.com", password: Self.password).status == 303)
        let home = try await viewer.get("/dashboard")
        #expect(home.html.contains("FlowerModels"))
        #expect(!home.html.contains("New collection"))
        let page = try await viewer.get("/dashboard/teams/T/collections/FlowerModels")
        #expect(page.status == 200)
        #expect(page.html.contains("second") && page.html.contains("first"))
        #expect(!page.html.contains("/activate") && !page.html.contains("/archive") && !page.html.contains("/rollback"))
        let path = "/dashboard/teams/T/collections/FlowerModels"
        let refused = try await viewer.post(path + "/deployments/\(second)/activate", [:])
        #expect(refused.status == 403)
        #expect(refused.html.contains("developer role"))
        #expect(try await viewer.post(path + "/deployments/\(second)/archive", [:]).status == 403)
        #expect(try await viewer.post(path + "/rollback", [:]).status == 403)
        #expect(try await viewer.post("/dashboard/teams/T/collections", ["identifier": "mine", "models": "A"]).status == 403)
        #expect(try await viewer.get("/dashboard/teams/T/collections/new").status == 403)
        #expect((try await flowers.admin.call("GET", Flowers.base).object["activeDeploymentID"] as? String)?.lowercased() == first.lowercased())

        // A developer changes: activate, then roll back.
        let developer = Browser(base: server.base)
        #expect(try await developer.welcome(token: developerToken, email: "dev@example.com", password: Self.password).status == 303)
        let devPage = try await developer.get(path)
        #expect(devPage.html.contains("/deployments/\(second.lowercased())/activate"))
        #expect(try await developer.post(path + "/deployments/\(second.lowercased())/activate", [:]).status == 303)
        #expect((try await flowers.admin.call("GET", Flowers.base).object["activeDeploymentID"] as? String)?.lowercased() == second.lowercased())
        #expect(try await developer.post(path + "/rollback", [:]).status == 303)
        #expect((try await flowers.admin.call("GET", Flowers.base).object["activeDeploymentID"] as? String)?.lowercased() == first.lowercased())
        let history = try await developer.get(path)
        #expect(history.html.contains("rollback"))
        // Archiving the active deployment is refused in words.
        let archive = try await developer.post(path + "/deployments/\(first.lowercased())/archive", [:])
        #expect(archive.status == 409)
        #expect(archive.html.contains("is active; activate another one first"))
        // A welcome with the same token again is refused: the account has a password now.
        let twice = Browser(base: server.base)
        #expect(try await twice.welcome(token: viewerToken, email: "vera2@example.com", password: Self.password).status == 409)
    }

    @Test("the device form answers with the models the active deployment gives that device")
    func deviceAnswer() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let phone = try await flowers.upload("phone"), tablet = try await flowers.upload("tablet"), stylizer = try await flowers.upload("stylizer")
        let id = try #require(try await flowers.deployment("spring", models: ["FlowerClassifier": phone, "FlowerStylizer": stylizer],
                                                            rules: [["condition": "deviceClass=tablet", "models": ["FlowerClassifier": tablet]]]).id)
        let browser = try await Self.ownerBrowser(server)
        let path = "/dashboard/teams/T/collections/FlowerModels/device"
        let before = try await browser.get(path + "?deviceID=d1&deviceClass=tablet")
        #expect(before.html.contains("no active deployment"))
        #expect(try await flowers.activate(id).status == 200)
        let onTablet = try await browser.get(path + "?deviceID=d1&deviceClass=tablet")
        #expect(onTablet.status == 200)
        #expect(onTablet.html.contains("rule 1: deviceClass=tablet"), "\(onTablet.html)")
        #expect(onTablet.html.contains(String(tablet.prefix(12))))
        #expect(!onTablet.html.contains(String(phone.prefix(12))))
        let onPhone = try await browser.get(path + "?deviceID=d1&deviceClass=phone")
        #expect(onPhone.html.contains("the defaults"))
        #expect(onPhone.html.contains(String(phone.prefix(12))))
        let bad = try await browser.get(path + "?deviceID=d1&deviceClass=toaster")
        #expect(bad.status == 400)
        #expect(bad.html.contains("Unknown deviceClass"))
    }

    @Test("everything shown is escaped: markup in a description or a refused identifier is text")
    func escaping() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        try await World(server).team("M")
        let browser = try await Self.ownerBrowser(server)
        let script = "<script>alert(1)</script>"
        let made = try await browser.post("/dashboard/teams/M/collections", ["identifier": "xss", "description": script, "models": "A"])
        #expect(made.status == 303)
        for path in ["/dashboard", "/dashboard/teams/M/collections/xss"] {
            let page = try await browser.get(path)
            #expect(page.html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "\(path)")
            #expect(!page.html.contains(script), "\(path)")
        }
        let refused = try await browser.post("/dashboard/teams/M/collections", ["identifier": script, "models": "A"])
        #expect(refused.status == 400)
        #expect(refused.html.contains("value=\"&lt;script&gt;alert(1)&lt;/script&gt;\""))
        #expect(!refused.html.contains(script))
        #expect(!refused.html.contains("<script"))
    }

    @Test("a member with no team creates one and owns it; a taken or bad name is refused in words")
    func newTeam() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let browser = try await Self.ownerBrowser(server)
        let empty = try await browser.get("/dashboard")
        #expect(empty.html.contains("You are not in a team yet") && empty.html.contains("href=\"/dashboard/new-team\""))
        let form = try await browser.get("/dashboard/new-team")
        #expect(form.status == 200 && form.html.contains("<label for=\"name\">"))
        let made = try await browser.post("/dashboard/new-team", ["name": "Flowers"])
        #expect(made.status == 303 && made.location == "/dashboard")
        let home = try await browser.get("/dashboard")
        #expect(home.html.contains("Flowers") && home.html.contains("owner") && !home.html.contains("You are not in a team yet"))
        // The team is the API's: the owner's token lists it, with the owner's role.
        let teams = try await World(server).admin.call("GET", "/v1/teams")
        #expect(teams.text.contains("\"Flowers\"") && teams.text.contains("\"owner\""))
        let taken = try await browser.post("/dashboard/new-team", ["name": "Flowers"])
        #expect(taken.status == 409 && taken.html.contains("already exists"))
        let bad = try await browser.post("/dashboard/new-team", ["name": "<b>x</b>"])
        #expect(bad.status == 400 && bad.html.contains("value=\"&lt;b&gt;x&lt;/b&gt;\"") && !bad.html.contains("<b>x"))
        #expect(try await browser.post("/dashboard/new-team", ["name": "Other"], csrf: "forged").status == 403)
    }

    @Test("a form larger than the server's first read still has its CSRF token found; one over 64 KB is refused in words")
    func largeForms() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        try await World(server).team("M")
        let browser = try await Self.ownerBrowser(server)
        // A collection description of 900 characters, written as percent escapes: about 8 KB of body.
        let description = String(repeating: "é", count: 900)
        let made = try await browser.post("/dashboard/teams/M/collections", ["identifier": "big", "description": description, "models": "A"])
        #expect(made.status == 303, "\(made.html.prefix(300))")
        #expect(try await browser.get("/dashboard/teams/M/collections/big").html.contains(description))
        // Before sign-in too (double-submit cookie): a wrong password, not a CSRF refusal.
        let anonymous = Browser(base: server.base)
        _ = try await anonymous.get("/dashboard/sign-in")
        let signIn = try await anonymous.post("/dashboard/sign-in", ["email": Self.ownerEmail, "password": "wrong", "padding": String(repeating: "x", count: 6000)])
        #expect(signIn.status == 401)
        let huge = try await browser.post("/dashboard/teams/M/collections", ["identifier": "huge", "description": String(repeating: "y", count: 70_000), "models": "A"])
        #expect(huge.status == 400 && huge.html.contains("larger than 64 KB"), "\(huge.status)")
        #expect(try await browser.get("/dashboard/teams/M/collections/huge").status == 404)
    }

    /// A browser that presents `session` as its cookie.
    static func withSession(_ session: String, _ server: TestServer) -> Browser {
        let browser = Browser(base: server.base)
        browser.setCookie("coffer_session", session)
        return browser
    }
}
