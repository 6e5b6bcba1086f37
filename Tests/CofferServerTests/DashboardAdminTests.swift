import CofferFormat
@testable import CofferServer
import Fluent
import Foundation
import Testing

/// The team-administration pages over real HTTP: keys (the file downloaded once), apps (the
/// credential shown once), members and roles (the API's rules), the member's API tokens, the
/// activity log with its charts, and a viewer who changes nothing.
@Suite("Dashboard administration")
struct DashboardAdminTests {
    /// Team T (from ``Flowers``) with its owner signed in to the dashboard.
    static func owner(_ server: TestServer) async throws -> (Flowers, Browser) {
        let flowers = try await Flowers.make(server)
        return (flowers, try await DashboardTests.ownerBrowser(server))
    }

    @Test("a key is created as a one-time .modelkey download; the page never shows it; revoking works")
    func keys() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let (flowers, browser) = try await Self.owner(server)
        let page = try await browser.get("/dashboard/teams/T/keys")
        #expect(page.status == 200)
        #expect(page.html.contains("<label for=\"name\">Key name</label>"))
        #expect(page.html.contains("clf"), "the fixture's key is listed")

        let download = try await browser.post("/dashboard/teams/T/keys", ["name": "spring key"])
        #expect(download.status == 200)
        #expect(download.header("Cache-Control") == "no-store")
        #expect(download.header("Content-Disposition") == "attachment; filename=\"spring key.modelkey\"; filename*=UTF-8''spring%20key.modelkey")
        let key = try ModelKey(fileRepresentation: download.body)
        #expect(key.name == "spring key")
        let material = key.key.withUnsafeBytes { Data($0).base64EncodedString() }

        // keys.js's ticket comes back as a cookie it can read, set as the download begins; any
        // other value is not echoed into a cookie.
        let ticket = "0123456789abcdef0123456789abcdef"
        let ticketed = try await browser.post("/dashboard/teams/T/keys", ["name": "summer key", "ticket": ticket])
        #expect(ticketed.status == 200 && ticketed.header("Content-Disposition")?.hasPrefix("attachment;") == true)
        let cookie = ticketed.header("Set-Cookie") ?? ""
        #expect(cookie.contains("coffer_download_\(ticket)=1") && cookie.contains("Path=/dashboard") && !cookie.contains("HttpOnly"), "\(cookie)")
        for (index, forged) in ["<script>", ticket.uppercased(), ticket + "0", "0123456789abcdef"].enumerated() {
            let refused = try await browser.post("/dashboard/teams/T/keys", ["name": "key \(index)", "ticket": forged])
            #expect(refused.status == 200 && !(refused.header("Set-Cookie") ?? "").contains("coffer_download"), "\(forged)")
        }

        let after = try await browser.get("/dashboard/teams/T/keys?created=1")
        #expect(after.html.contains("spring key") && after.html.contains(key.id))
        #expect(!after.html.contains(material), "the key material is in the page")
        #expect(after.html.contains("only copy"))
        let listed = try await flowers.admin.call("GET", "/v1/teams/T/keys")
        #expect(listed.array.contains { $0["id"] as? String == key.id })

        let bad = try await browser.post("/dashboard/teams/T/keys", ["name": "<b>no</b>"])
        #expect(bad.status == 400)
        #expect(bad.header("Content-Disposition") == nil)
        #expect(bad.html.contains("key name must be") || bad.html.contains("Key name must be"))
        #expect(bad.html.contains("&lt;b&gt;no&lt;/b&gt;") && !bad.html.contains("<b>no</b>"))

        // Through another team's page (the owner is in both), the key is not found and stays.
        try await flowers.world.team("Other")
        #expect(try await browser.post("/dashboard/teams/Other/keys/\(key.id)/revoke", [:]).status == 404)
        let stillLive = try await flowers.admin.call("GET", "/v1/teams/T/keys")
        #expect(!(stillLive.array.first { $0["id"] as? String == key.id }?["revokedAt"] is String))
        let revoke = try await browser.post("/dashboard/teams/T/keys/\(key.id)/revoke", [:])
        #expect(revoke.status == 303)
        #expect(revoke.location == "/dashboard/teams/T/keys")
        let revoked = try await flowers.admin.call("GET", "/v1/teams/T/keys")
        #expect(revoked.array.first { $0["id"] as? String == key.id }?["revokedAt"] is String)
        #expect(try await browser.get("/dashboard/teams/T/keys").html.contains("Revoked"))
    }

    @Test("an app's credential is made only with the current password and shown once, in the answer to the form; rotate and revoke use the API's rules")
    func apps() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let (flowers, browser) = try await Self.owner(server)
        try await flowers.world.release(flowers.key, in: "T", to: [])
        let released = "C" + flowers.key.id.prefix(12)
        // A stolen session cookie alone makes no credential: the form asks for the password again.
        for password in ["", "not my password"] {
            let refused = try await browser.post("/dashboard/teams/T/apps", ["name": "Thief App", "platform": "ios", "bundleID": "", "collections": released,
                                                                             "password": password])
            #expect(refused.status == 400 && refused.html.contains("The current password is not right."))
            let shown = Self.field("shown-credential", in: refused.html) != nil  // a Bool: a failure must not print the credential
            #expect(!shown, "a credential was made without the password")
        }
        #expect(try await flowers.admin.call("GET", "/v1/teams/T/apps").array.allSatisfy { $0["name"] as? String != "Thief App" })
        let made = try await browser.post("/dashboard/teams/T/apps", ["name": "Flower App", "platform": "ios", "bundleID": "", "collections": released,
                                                                      "password": DashboardTests.password])
        #expect(made.status == 200)
        #expect(made.header("Cache-Control") == "no-store")
        let credential = try #require(Self.field("shown-credential", in: made.html))
        let id = try #require(Self.field("shown-app-id", in: made.html))
        #expect(credential.hasPrefix("cfa_"))
        let device = Device()
        #expect(try await device.request(flowers.key.id, app: (id, credential), on: server).status == 200)
        let page = try await browser.get("/dashboard/teams/T/apps")
        #expect(page.html.contains("Flower App") && page.html.contains(id) && page.html.contains(released))
        // Its collections change on the page (with the password, "appBindingsAskThePassword"):
        // bound to none, its devices get no key.
        let password = DashboardTests.password
        #expect(try await browser.post("/dashboard/teams/T/apps/\(id)/collections", ["collections": "", "password": password]).status == 303)
        #expect(try await device.request(flowers.key.id, app: (id, credential), on: server).errorCode == "not_in_app_collections")
        #expect(try await browser.post("/dashboard/teams/T/apps/\(id)/collections", ["collections": released, "password": password]).status == 303)
        #expect(!page.html.contains(credential), "the credential is shown again")

        let refusedRotation = try await browser.post("/dashboard/teams/T/apps/\(id)/rotate", ["password": "not my password"])
        #expect(refusedRotation.status == 400 && refusedRotation.html.contains("The current password is not right."))
        let rotatedAnyway = Self.field("shown-credential", in: refusedRotation.html) != nil
        #expect(!rotatedAnyway, "a credential was rotated without the password")
        #expect(try await device.request(flowers.key.id, app: (id, credential), on: server).status == 200, "a refused rotation keeps the credential")
        _ = try await browser.get("/dashboard/teams/T/apps")
        let beforeRotate = browser.csrf
        let rotated = try await browser.post("/dashboard/teams/T/apps/\(id)/rotate", ["password": DashboardTests.password])
        #expect(rotated.status == 200)
        let fresh = try #require(Self.field("shown-credential", in: rotated.html))
        #expect(fresh != credential)
        #expect(try await device.request(flowers.key.id, app: (id, credential), on: server).status == 403)
        #expect(try await device.request(flowers.key.id, app: (id, fresh), on: server).status == 200)
        // A reload of the rotation (the same form, its token now used) is refused and keeps the credential just shown.
        let repeated = try await browser.post("/dashboard/teams/T/apps/\(id)/rotate", ["password": DashboardTests.password], csrf: beforeRotate)
        #expect(repeated.status == 403 && repeated.html.contains("already sent"))
        #expect(try await device.request(flowers.key.id, app: (id, fresh), on: server).status == 200)
        let twice = try await browser.post("/dashboard/teams/T/apps", ["name": "Flower App 2", "platform": "ios", "bundleID": "",
                                                                       "password": DashboardTests.password], csrf: beforeRotate)
        #expect(twice.status == 403)
        #expect(!(try await browser.get("/dashboard/teams/T/apps").html.contains("Flower App 2")))

        let wrong = try await browser.post("/dashboard/teams/T/apps", ["name": "Other", "platform": "amiga", "password": DashboardTests.password])
        #expect(wrong.status == 400)
        #expect(wrong.html.contains("Platform must be one of"))

        #expect(try await browser.post("/dashboard/teams/T/apps/\(id)/revoke", [:]).status == 303)
        #expect(try await device.request(flowers.key.id, app: (id, fresh), on: server).status == 403)
        let again = try await browser.post("/dashboard/teams/T/apps/\(id)/rotate", ["password": DashboardTests.password])
        #expect(again.status == 409)
        #expect(again.html.contains("is revoked"))
        #expect(try await browser.post("/dashboard/teams/T/apps/\(UUID())/revoke", [:]).status == 404)
    }

    @Test("members: inviting and role changes ask for the current password; the code is shown once, the person joins with their own account; roles change with the API's rules; the last owner stays")
    func members() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let (flowers, browser) = try await Self.owner(server)
        // A stolen session cookie alone invites no one: the form asks for the password again.
        let refused = try await browser.post("/dashboard/teams/T/members", ["name": "thief", "role": "owner", "password": "not my password"])
        #expect(refused.status == 400 && refused.html.contains("The current password is not right."))
        let invited = Self.field("shown-code", in: refused.html) != nil  // a Bool: a failure must not print the code
        #expect(!invited, "an invitation was made without the password")
        #expect(!(try await browser.get("/dashboard/teams/T/members").html.contains("pending")), "no invitation was made")
        let added = try await browser.post("/dashboard/teams/T/members", ["name": "carol", "role": "viewer", "password": DashboardTests.password])
        #expect(added.status == 200)
        #expect(!added.html.contains("cft_"), "no token is made for the invited person")
        let code = try #require(Self.field("shown-code", in: added.html))
        #expect(code.hasPrefix("cfi_"))
        let page = try await browser.get("/dashboard/teams/T/members")
        #expect(page.html.contains("pending") && !page.html.contains(code))
        // Carol joins on /dashboard/join with an account of her own and is signed in to it.
        let carol = Browser(base: server.base)
        _ = try await carol.get("/dashboard/join")
        let joined = try await carol.post("/dashboard/join", ["code": code, "name": "carol", "email": "carol@example.com", "password": "carol's own password"])
        #expect(joined.status == 303 && joined.location == "/dashboard", "\(joined.status)")
        #expect(try await carol.get("/dashboard/teams/T/members").status == 200)
        // The code works once.
        let again = Browser(base: server.base)
        _ = try await again.get("/dashboard/join")
        let reused = try await again.post("/dashboard/join", ["code": code, "name": "mallory", "email": "m@example.com", "password": "a password long enough"])
        #expect(reused.status == 410 && reused.html.contains("already used"))

        // A role change asks for the password too: a stolen session promotes no one.
        let refusedPromotion = try await browser.post("/dashboard/teams/T/members/carol/role", ["role": "owner", "password": "not my password"])
        #expect(refusedPromotion.status == 400 && refusedPromotion.html.contains("The current password is not right."))
        #expect(try await flowers.admin.call("GET", "/v1/teams/T/members").array.first { $0["name"] as? String == "carol" }?["role"] as? String == "viewer")
        #expect(try await browser.post("/dashboard/teams/T/members/carol/role", ["role": "developer", "password": DashboardTests.password]).status == 303)
        let listed = try await flowers.admin.call("GET", "/v1/teams/T/members")
        #expect(listed.array.first { $0["name"] as? String == "carol" }?["role"] as? String == "developer")
        #expect(try await browser.post("/dashboard/teams/T/members/carol/role", ["role": "emperor", "password": DashboardTests.password]).status == 400)

        let demote = try await browser.post("/dashboard/teams/T/members/admin/role", ["role": "viewer", "password": DashboardTests.password])
        #expect(demote.status == 409)
        #expect(demote.html.contains("last owner of a team cannot be demoted"))
        let leave = try await browser.post("/dashboard/teams/T/members/admin/remove", [:])
        #expect(leave.status == 409)
        #expect(leave.html.contains("cannot be removed"))

        // A member's name changes the role, without an invitation.
        let existing = try await browser.post("/dashboard/teams/T/members", ["name": "carol", "role": "viewer", "password": DashboardTests.password])
        #expect(existing.status == 200 && Self.field("shown-code", in: existing.html) == nil)
        #expect(existing.html.contains("carol is now a viewer of T."))
        #expect(try await browser.post("/dashboard/teams/T/members/carol/remove", [:]).status == 303)
        #expect(try await flowers.admin.call("GET", "/v1/teams/T/members").array.allSatisfy { $0["name"] as? String != "carol" })
        #expect(try await browser.post("/dashboard/teams/T/members/nobody/remove", [:]).status == 404)
        // With a second owner the first may leave; the team's pages are then not theirs to see.
        _ = try await flowers.world.member("olga", role: "owner", in: "T")
        let left = try await browser.post("/dashboard/teams/T/members/admin/remove", [:])
        #expect(left.location == "/dashboard")
        #expect(try await browser.get("/dashboard/teams/T/members").status == 403)
    }

    @Test("API tokens: shown once, work, are listed without their value, and revoke")
    func tokens() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let (_, browser) = try await Self.owner(server)
        // Not without the current password: a stolen session cookie alone makes no lasting token.
        let bare = try await browser.post("/dashboard/tokens", ["name": "stolen"])
        #expect(bare.status == 400)
        let wrong = try await browser.post("/dashboard/tokens", ["name": "stolen", "password": "not the password"])
        #expect(wrong.status == 400)
        #expect(wrong.html.contains("The current password is not right."))
        #expect(Self.field("shown-token", in: wrong.html) == nil)
        let made = try await browser.post("/dashboard/tokens", ["name": "ci-release", "password": DashboardTests.password])
        #expect(made.status == 200)
        let token = try #require(Self.field("shown-token", in: made.html))
        let api = HTTP(base: server.base, token: token)
        let mine = try await api.call("GET", "/v1/tokens")
        #expect(mine.status == 200)
        let id = try #require(mine.array.first { $0["name"] as? String == "ci-release" }?["id"] as? String)
        let page = try await browser.get("/dashboard/tokens")
        #expect(page.html.contains("ci-release") && !page.html.contains(token))
        #expect(page.html.contains(String(token.prefix(10))))
        #expect(try await browser.post("/dashboard/tokens", ["name": "", "password": DashboardTests.password]).status == 400)
        // The refused attempts made nothing.
        let names = try await api.call("GET", "/v1/tokens").array.compactMap { $0["name"] as? String }
        #expect(names.contains("ci-release") && !names.contains("stolen") && !names.contains(""))
        #expect(try await browser.post("/dashboard/tokens/\(id.lowercased())/revoke", [:]).status == 303)
        #expect(try await api.call("GET", "/v1/tokens").status == 401)
    }

    @Test("an app's bound collections and attestation policy change only with the current password: a stolen session cannot widen what the shipped credential fetches")
    func appBindingsAskThePassword() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        _ = try await flowers.activatedDeployment()
        let browser = try await DashboardTests.ownerBrowser(server)
        let device = Device()
        let app = flowers.app
        #expect(try await device.request(flowers.key.id, app: app, on: server).status == 200)
        let path = "/dashboard/teams/T/apps/\(app.id)"
        let bare = try await browser.post(path + "/collections", ["collections": ""])
        #expect(bare.status == 400, "\(bare.status)")
        #expect(try await browser.post(path + "/collections", ["collections": "", "password": "not my password"]).status == 400)
        #expect(try await browser.post(path + "/attestation", ["policy": "apple-app-attest", "appleTeamID": "ABCDE12345"]).status == 400)
        // Nothing changed: still bound, still policy none.
        #expect(try await device.request(flowers.key.id, app: app, on: server).status == 200)
        let row = try #require(try await AppRecord.find(UUID(uuidString: app.id), on: server.app.db))
        #expect(try AttestationSettings.stored(row.attestation).policy == AttestationSettings.Policy.none)
        #expect(try await browser.post(path + "/collections", ["collections": "", "password": DashboardTests.password]).status == 303)
        #expect(try await device.request(flowers.key.id, app: app, on: server).errorCode == "not_in_app_collections")
    }

    @Test("guesses of the current password share one budget across the token and password forms")
    func passwordGuessBudget() async throws {
        let server = try await TestServer.start { $0.signInAttemptsPerMinute = 2 }
        defer { Task { try? await server.stop() } }
        let browser = try await DashboardTests.ownerBrowser(server)
        for _ in 0..<2 {
            #expect(try await browser.post("/dashboard/tokens", ["name": "guess", "password": "a guess"]).status == 400)
        }
        // The third guess, on the other form, is over the limit before the password is even checked.
        let limited = try await browser.post("/dashboard/account/password", ["current": DashboardTests.password, "password": "a new password long enough"])
        #expect(limited.status == 429)
        #expect(limited.html.contains("Too many attempts."))
        let token = try await browser.post("/dashboard/tokens", ["name": "late", "password": DashboardTests.password])
        #expect(token.status == 429)
        #expect(Self.field("shown-token", in: token.html) == nil)
    }

    @Test("a viewer sees keys, apps, members and activity but gets no change forms, and changes are refused")
    func viewer() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let (flowers, _) = try await Self.owner(server)
        let token = try #require(try await flowers.world.member("vera", role: "viewer", in: "T").token)
        let viewer = Browser(base: server.base)
        #expect(try await viewer.welcome(token: token, email: "vera@example.com", password: DashboardTests.password).status == 303)
        for page in ["keys", "apps", "members", "activity"] {
            let reply = try await viewer.get("/dashboard/teams/T/\(page)")
            #expect(reply.status == 200, "\(page)")
            #expect(!reply.html.contains("method=\"post\" action=\"/dashboard/teams"), "\(page) has a change form for a viewer")
        }
        #expect(try await viewer.post("/dashboard/teams/T/keys", ["name": "mine"]).status == 403)
        #expect(try await viewer.post("/dashboard/teams/T/keys/\(flowers.key.id)/revoke", [:]).status == 403)
        #expect(try await viewer.post("/dashboard/teams/T/apps", ["name": "mine", "platform": "ios"]).status == 403)
        #expect(try await viewer.post("/dashboard/teams/T/apps/\(flowers.app.id)/rotate", [:]).status == 403)
        #expect(try await viewer.post("/dashboard/teams/T/apps/\(flowers.app.id)/revoke", [:]).status == 403)
        #expect(try await viewer.post("/dashboard/teams/T/members", ["name": "eve", "role": "owner"]).status == 403)
        #expect(try await viewer.post("/dashboard/teams/T/members/vera/role", ["role": "owner"]).status == 403)
        #expect(try await viewer.post("/dashboard/teams/T/members/admin/remove", [:]).status == 403)
        // Nothing changed.
        #expect(try await flowers.admin.call("GET", "/v1/teams/T/keys").array.count == 1)
        #expect(try await flowers.admin.call("GET", "/v1/teams/T/apps").array.allSatisfy { $0["revokedAt"] == nil || $0["revokedAt"] is NSNull })
        #expect(try await flowers.admin.call("GET", "/v1/teams/T/members").array.first { $0["name"] as? String == "vera" }?["role"] as? String == "viewer")
        // A viewer's own tokens are theirs to manage.
        #expect(try await viewer.post("/dashboard/tokens", ["name": "vera-laptop", "password": DashboardTests.password]).status == 200)
        // A forged form without the session's token is refused.
        #expect(try await viewer.post("/dashboard/tokens", ["name": "forged", "password": DashboardTests.password], csrf: .some(nil)).status == 403)
    }

    @Test("the activity log filters and pages; the charts count downloads (from byte 0) and key deliveries; device input is escaped")
    func activity() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let (flowers, browser) = try await Self.owner(server)
        let blob = try await flowers.upload("a")
        let deployment = try #require(try await flowers.deployment("first", models: ["FlowerClassifier": blob, "FlowerStylizer": blob]).id)
        #expect(try await flowers.activate(deployment).status == 200)
        let empty = try await browser.get("/dashboard/teams/T/activity")
        #expect(empty.html.contains("No model downloads in these days."))
        #expect(empty.html.contains("No keys delivered to devices in these days."))

        let anyone = HTTP(base: server.base)
        #expect(try await anyone.call("GET", "/v1/blobs/\(blob)").status == 200)  // counts
        #expect(try await anyone.call("GET", "/v1/blobs/\(blob)", headers: ["Range": "bytes=0-9"]).status == 206)  // counts
        #expect(try await anyone.call("GET", "/v1/blobs/\(blob)", headers: ["Range": "bytes=10-"]).status == 206)  // a resumption
        #expect(try await anyone.call("HEAD", "/v1/blobs/\(blob)").status == 200)
        #expect(try await anyone.call("GET", "/v1/blobs/\(blob)", headers: ["If-None-Match": "\"\(blob)\""]).status == 304)
        let device = Device(id: "<script>alert(1)</script>")
        #expect(try await device.request(flowers.key.id, app: flowers.app, on: server).status == 200)
        #expect(try await Device().request(flowers.key.id, app: flowers.app, on: server).status == 200)
        #expect(try await Device().request(flowers.key.id, app: (flowers.app.id, "cfa_wrong"), on: server).status == 401)

        let page = try await browser.get("/dashboard/teams/T/activity")
        #expect(page.status == 200)
        #expect(page.html.contains("2 downloads from"), "downloads: whole + range from 0")
        #expect(page.html.contains("2 key deliveries from"))
        #expect(page.html.contains("FlowerModels / FlowerClassifier · \(blob.prefix(8)) (+1)"), "one blob, two versions: one series")
        #expect(page.html.contains("role=\"img\" aria-labelledby=\"downloads-title downloads-desc\""))
        #expect(page.html.contains("<title id=\"downloads-title\">"))
        #expect(page.html.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && !page.html.contains("<script>alert(1)"))
        #expect(page.html.contains("app Demo"), "app IDs are shown by name")

        let deliveries = try await browser.get("/dashboard/teams/T/activity?action=key.deliver&outcome=delivered")
        #expect(deliveries.html.components(separatedBy: "<code>key.deliver</code>").count - 1 == 2)
        #expect(!deliveries.html.contains("<code>key.create</code>"))
        let admin = try await browser.get("/dashboard/teams/T/activity?actor=admin&action=deployment")
        #expect(admin.html.contains("<code>deployment.create</code>") && !admin.html.contains("<code>key.deliver</code>"))
        let byApp = try await browser.get("/dashboard/teams/T/activity?actor=app:\(flowers.app.id.lowercased())")
        #expect(byApp.html.components(separatedBy: "<code>key.deliver</code>").count - 1 == 2, "app IDs match in either case")
        #expect(page.html.contains("href=\"/dashboard/teams/T/activity?actor=admin\""), "an actor links to what they did")
        let future = try await browser.get("/dashboard/teams/T/activity?from=2099-01-01")
        #expect(future.html.contains("Nothing matches these filters."))
        let wrong = try await browser.get("/dashboard/teams/T/activity?from=yesterday")
        #expect(wrong.status == 400)
        #expect(wrong.html.contains("From must be a day such as"))
        #expect(try await browser.get("/dashboard/teams/T/activity?action=everything").status == 400)

        // Pages of 50, newest first.
        for index in 0..<55 { _ = try await flowers.world.key(in: "T", name: "k\(index)") }
        let first = try await browser.get("/dashboard/teams/T/activity?action=key")
        #expect(first.html.components(separatedBy: "<code>key.create</code>").count - 1 == 50)
        #expect(first.html.contains("href=\"/dashboard/teams/T/activity?action=key&amp;page=2\""))
        let second = try await browser.get("/dashboard/teams/T/activity?action=key&page=2")
        #expect(second.html.components(separatedBy: "<code>key.create</code>").count - 1 == 6)
        #expect(second.html.contains("Newer"))
    }

    /// The value of the input with `id` in a page.
    static func field(_ id: String, in html: String) -> String? {
        guard let start = html.range(of: "id=\"\(id)\"") else { return nil }
        guard let value = html[start.upperBound...].range(of: "value=\"") else { return nil }
        return String(html[value.upperBound...].prefix { $0 != "\"" })
    }
}
