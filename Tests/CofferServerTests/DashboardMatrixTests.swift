import CofferFormat
import Foundation
import Testing

/// The dashboard's routes in the authorization matrix: every one, for every kind of browser, from
/// one table. ``AuthorizationMatrixTests/tableCoversEveryRoute()`` fails when a registered
/// dashboard route is missing here, so a page cannot escape the roles.
extension AuthorizationMatrixTests {
    /// Who needs what on a dashboard route. `signedIn`: any member with a session.
    enum Page: Equatable { case everyone, signedIn, viewer, developer, owner }

    struct DashboardRoute {
        let method: String
        let path: String
        let access: Page
        /// The status of a request that is allowed (303 for forms that redirect after the change).
        let success: Int
        /// Status for a browser without a session when not the usual 303 to the sign-in page.
        var anonymous: Int? = nil
        /// Status for a signed-in browser when not `success`.
        var signedIn: Int? = nil
        /// Sent as the dashboard's upload script sends a file: a fresh sealed model as the body, the
        /// CSRF token in `X-CSRF-Token`.
        var upload = false
        let make: @Sendable (Setup) async throws -> (path: String, form: [String: String]?)
    }

    static let page = "/dashboard/teams/M/collections/C"

    static let dashboardRoutes: [DashboardRoute] = [
        DashboardRoute(method: "GET", path: "/dashboard/assets/dashboard.css", access: .everyone, success: 200) { _ in ("/dashboard/assets/dashboard.css", nil) },
        DashboardRoute(method: "GET", path: "/dashboard/assets/upload.js", access: .everyone, success: 200) { _ in ("/dashboard/assets/upload.js", nil) },
        DashboardRoute(method: "GET", path: "/dashboard/**", access: .everyone, success: 404) { _ in ("/dashboard/no/such/page", nil) },
        DashboardRoute(method: "GET", path: "/dashboard/sign-in", access: .everyone, success: 200, signedIn: 303) { _ in ("/dashboard/sign-in", nil) },
        DashboardRoute(method: "POST", path: "/dashboard/sign-in", access: .everyone, success: 401) { _ in
            ("/dashboard/sign-in", ["email": "owner@example.com", "password": "not the right password"])
        },
        DashboardRoute(method: "GET", path: "/dashboard/setup", access: .everyone, success: 404) { _ in ("/dashboard/setup", nil) },
        DashboardRoute(method: "POST", path: "/dashboard/setup", access: .everyone, success: 404) { s in
            ("/dashboard/setup", ["token": s.world.server.adminToken, "email": "late@example.com", "password": "a password long enough"])
        },
        DashboardRoute(method: "GET", path: "/dashboard/welcome", access: .everyone, success: 200) { _ in ("/dashboard/welcome", nil) },
        DashboardRoute(method: "POST", path: "/dashboard/welcome", access: .everyone, success: 403) { _ in
            ("/dashboard/welcome", ["token": "cft_not-a-token", "email": "w@example.com", "password": "a password long enough"])
        },
        DashboardRoute(method: "GET", path: "/dashboard", access: .signedIn, success: 200) { _ in ("/dashboard", nil) },
        DashboardRoute(method: "GET", path: "/dashboard/signing-key", access: .signedIn, success: 200) { _ in ("/dashboard/signing-key", nil) },
        DashboardRoute(method: "GET", path: "/dashboard/new-team", access: .signedIn, success: 200) { _ in ("/dashboard/new-team", nil) },
        DashboardRoute(method: "POST", path: "/dashboard/new-team", access: .signedIn, success: 303) { _ in
            ("/dashboard/new-team", ["name": "t-\(UUID().uuidString.prefix(8))"])
        },
        DashboardRoute(method: "GET", path: "/dashboard/teams/{team}/collections/new", access: .developer, success: 200) { _ in
            ("/dashboard/teams/M/collections/new", nil)
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/collections", access: .developer, success: 303) { _ in
            ("/dashboard/teams/M/collections", ["identifier": "d-\(UUID().uuidString.prefix(8))", "models": "A"])
        },
        DashboardRoute(method: "GET", path: "/dashboard/teams/{team}/collections/{collection}", access: .viewer, success: 200) { _ in (page, nil) },
        DashboardRoute(method: "GET", path: "/dashboard/teams/{team}/collections/{collection}/device", access: .viewer, success: 200) { _ in
            (page + "/device?deviceID=matrix&deviceClass=tablet", nil)
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/collections/{collection}/deployments/{deployment}/activate", access: .developer, success: 303) { s in
            (page + "/deployments/\(try await s.draft())/activate", [:])
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/collections/{collection}/deployments/{deployment}/archive", access: .developer, success: 303) { s in
            (page + "/deployments/\(try await s.draft())/archive", [:])
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/collections/{collection}/deployments/{deployment}/advance", access: .developer, success: 303) { s in
            (page + "/deployments/\(try await s.staged())/advance", [:])
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/collections/{collection}/deployments/{deployment}/halt", access: .developer, success: 303) { s in
            (page + "/deployments/\(try await s.staged())/halt", ["reason": "matrix"])
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/collections/{collection}/rollback", access: .developer, success: 303) { _ in
            (page + "/rollback", [:])
        },
        DashboardRoute(method: "GET", path: "/dashboard/teams/{team}/collections/{collection}/deployments/new", access: .developer, success: 200) { _ in
            (page + "/deployments/new", nil)
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/collections/{collection}/deployments", access: .developer, success: 303) { s in
            (page + "/deployments", ["name": "web-\(UUID().uuidString.prefix(8))", "model-0": s.blob])
        },
        DashboardRoute(method: "GET", path: "/dashboard/teams/{team}/collections/{collection}/deployments/{deployment}", access: .viewer, success: 200) { s in
            (page + "/deployments/\(try await s.draft())", nil)
        },
        DashboardRoute(method: "GET", path: "/dashboard/teams/{team}/collections/{collection}/deployments/{deployment}/clone", access: .developer, success: 200) { s in
            (page + "/deployments/\(try await s.draft())/clone", nil)
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/collections/{collection}/deployments/{deployment}/clone", access: .developer, success: 303) { s in
            (page + "/deployments/\(try await s.draft())/clone", ["name": "clone-\(UUID().uuidString.prefix(8))", "model-0": s.blob])
        },
        // The script's upload answers JSON: 401 without a session rather than the sign-in page.
        DashboardRoute(method: "GET", path: "/dashboard/teams/{team}/collections/{collection}/models/{model}", access: .viewer, success: 200) { _ in
            (page + "/models/A", nil)
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/collections/{collection}/models/{model}", access: .developer, success: 201,
                       anonymous: 401, upload: true) { _ in (page + "/models/A", nil) },
        DashboardRoute(method: "GET", path: "/dashboard/account", access: .signedIn, success: 200) { _ in ("/dashboard/account", nil) },
        DashboardRoute(method: "POST", path: "/dashboard/account/password", access: .signedIn, success: 400) { _ in
            ("/dashboard/account/password", ["current": "not the current password", "password": "a new password long enough"])
        },
        // Team administration (keys, apps, members, API tokens, activity).
        DashboardRoute(method: "GET", path: "/dashboard/assets/keys.js", access: .everyone, success: 200) { _ in ("/dashboard/assets/keys.js", nil) },
        DashboardRoute(method: "GET", path: "/dashboard/teams/{team}/keys", access: .viewer, success: 200) { _ in ("/dashboard/teams/M/keys", nil) },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/keys", access: .developer, success: 200) { _ in
            ("/dashboard/teams/M/keys", ["name": "k-\(UUID().uuidString.prefix(8))"])
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/keys/{key}/revoke", access: .developer, success: 303) { s in
            ("/dashboard/teams/M/keys/\(try await s.world.key(in: "M", name: "revoke-me").id)/revoke", [:])
        },
        DashboardRoute(method: "GET", path: "/dashboard/teams/{team}/apps", access: .viewer, success: 200) { _ in ("/dashboard/teams/M/apps", nil) },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/apps", access: .developer, success: 200) { _ in
            ("/dashboard/teams/M/apps", ["name": "a-\(UUID().uuidString.prefix(8))", "platform": "ios", "password": "a password long enough"])
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/apps/{app}/rotate", access: .developer, success: 200) { s in
            ("/dashboard/teams/M/apps/\(try await s.world.app(in: "M", name: "rotate-me").id)/rotate", ["password": "a password long enough"])
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/apps/{app}/revoke", access: .developer, success: 303) { s in
            ("/dashboard/teams/M/apps/\(try await s.world.app(in: "M", name: "revoke-me").id)/revoke", [:])
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/apps/{app}/attestation", access: .developer, success: 303) { s in
            ("/dashboard/teams/M/apps/\(try await s.world.app(in: "M", name: "attest-me").id)/attestation",
             ["policy": "apple-app-attest", "appleTeamID": "ABCDE12345", "appleEnvironment": "production", "securityLevel": "tee",
              "password": "a password long enough"])
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/apps/{app}/collections", access: .developer, success: 303) { s in
            ("/dashboard/teams/M/apps/\(try await s.world.app(in: "M", name: "bind-me").id)/collections", ["collections": "C, N", "password": "a password long enough"])
        },
        DashboardRoute(method: "GET", path: "/dashboard/join", access: .everyone, success: 200) { _ in ("/dashboard/join", nil) },
        DashboardRoute(method: "POST", path: "/dashboard/join", access: .everyone, success: 404) { _ in
            ("/dashboard/join", ["code": "cfi_not-a-code", "name": "j-\(UUID().uuidString.prefix(8))", "email": "j@example.com", "password": "a password long enough"])
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/invitations/{invitation}/revoke", access: .owner, success: 303) { s in
            let made = try await s.world.admin.call("POST", "/v1/teams/M/invitations", json: ["role": "viewer"])
            return ("/dashboard/teams/M/invitations/\(made.object["id"] as? String ?? "")/revoke", [:])
        },
        DashboardRoute(method: "GET", path: "/dashboard/teams/{team}/members", access: .viewer, success: 200) { _ in ("/dashboard/teams/M/members", nil) },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/members", access: .owner, success: 200) { _ in
            ("/dashboard/teams/M/members", ["name": "m-\(UUID().uuidString.prefix(8))", "role": "viewer", "password": "a password long enough"])
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/members/{member}/role", access: .owner, success: 303) { s in
            let name = "r-\(UUID().uuidString.prefix(8))"
            _ = try await s.world.member(name, role: "viewer", in: "M")
            return ("/dashboard/teams/M/members/\(name)/role", ["role": "developer", "password": "a password long enough"])
        },
        DashboardRoute(method: "POST", path: "/dashboard/teams/{team}/members/{member}/remove", access: .owner, success: 303) { s in
            let name = "x-\(UUID().uuidString.prefix(8))"
            _ = try await s.world.member(name, role: "viewer", in: "M")
            return ("/dashboard/teams/M/members/\(name)/remove", [:])
        },
        DashboardRoute(method: "GET", path: "/dashboard/tokens", access: .signedIn, success: 200) { _ in ("/dashboard/tokens", nil) },
        DashboardRoute(method: "POST", path: "/dashboard/tokens", access: .signedIn, success: 200) { _ in ("/dashboard/tokens", ["name": "matrix", "password": "a password long enough"]) },
        // Nobody's own token: every member gets 404 (revoking one's own is in DashboardAdminTests).
        DashboardRoute(method: "POST", path: "/dashboard/tokens/{token}/revoke", access: .signedIn, success: 404) { _ in
            ("/dashboard/tokens/\(UUID().uuidString.lowercased())/revoke", [:])
        },
        DashboardRoute(method: "GET", path: "/dashboard/teams/{team}/activity", access: .viewer, success: 200) { _ in
            ("/dashboard/teams/M/activity?action=key.deliver&from=2026-01-01", nil)
        },
        // Last: it ends the session it is called with.
        DashboardRoute(method: "POST", path: "/dashboard/sign-out", access: .signedIn, success: 303) { _ in ("/dashboard/sign-out", [:]) },
    ]

    /// What a browser of `actor` should get from `route`.
    static func expected(_ route: DashboardRoute, _ actor: Actor) -> Int {
        let anonymous = actor == .nobody || actor == .deviceCredential
        switch route.access {
        case .everyone: return anonymous ? route.success : (route.signedIn ?? route.success)
        case _ where anonymous: return route.anonymous ?? 303
        case .signedIn: return route.success
        case _ where actor == .otherTeam: return 403
        case .viewer: return route.success
        case .developer: return actor == .viewer ? 403 : route.success
        case .owner: return actor == .owner ? route.success : 403
        }
    }

    @Test("every dashboard route answers every kind of browser as the table says (a viewer changes nothing)")
    func dashboardMatrix() async throws {
        let server = try await TestServer.start {
            $0.signInAttemptsPerMinute = 1000
            $0.authFailuresPerAddressPerMinute = 10_000
        }
        defer { Task { try? await server.stop() } }
        let setup = try await Setup.make(server)
        // The owner sets up the dashboard; every other member chooses a sign-in with their API token.
        // All choose the same password, which the forms that ask for it again are given.
        let owner = Browser(base: server.base)
        _ = try await owner.get("/dashboard/setup")
        #expect(try await owner.post("/dashboard/setup", ["token": server.adminToken, "email": "owner@example.com", "password": "a password long enough"]).status == 303)
        _ = try await owner.get("/dashboard")  // the session's CSRF token
        var browsers: [Actor: Browser] = [.owner: owner]
        for actor in [Actor.developer, .viewer, .otherTeam] {
            let browser = Browser(base: server.base)
            let token = try #require(setup.clients[actor]?.token)
            #expect(try await browser.welcome(token: token, email: "\(actor.rawValue)@example.com", password: "a password long enough").status == 303)
            browsers[actor] = browser
        }
        // Visitors without a session: one that opened the sign-in page (so it has that page's
        // CSRF token) stands for both; the CSRF tests cover forms without any token.
        let anonymous = Browser(base: server.base)
        _ = try await anonymous.get("/dashboard/sign-in")
        browsers[.nobody] = anonymous
        browsers[.deviceCredential] = anonymous

        for route in Self.dashboardRoutes {
            for actor in Actor.allCases {
                let browser = browsers[actor]!
                _ = try await browser.get("/dashboard/sign-in")  // the current CSRF token of this browser
                let (path, form) = try await route.make(setup)
                let reply = if route.method == "GET" {
                    try await browser.get(path)
                } else if route.upload {
                    try await browser.postRaw(path, body: Data(try SealedModel.seal(Array(UUID().uuidString.utf8), name: "m", using: .modelKey(setup.key))),
                                              contentType: "application/octet-stream", headers: ["X-CSRF-Token": browser.csrf])
                } else {
                    try await browser.post(path, form ?? [:])
                }
                let want = Self.expected(route, actor)
                #expect(reply.status == want, "\(route.method) \(route.path) as \(actor.rawValue): \(reply.status), expected \(want)")
                if want == 303 && (actor == .nobody || actor == .deviceCredential) && route.access != .everyone {
                    #expect(reply.location == "/dashboard/sign-in", "\(route.method) \(route.path) as \(actor.rawValue)")
                }
            }
        }
    }
}
