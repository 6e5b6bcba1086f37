import Fluent
import Vapor

/// `/dashboard/join`: a person redeems an invitation code their team's owner gave them.
///
/// Signed in, they join with their own account. Not signed in, they make their own account (name,
/// email address, password) and are signed in to it; its API tokens they make later themselves.
/// Unknown, used, revoked and expired codes count against the client address's failure budget.
struct JoinPage: RouteCollection {
    struct Page: Encodable, Sendable {
        let chrome: Chrome
        /// The signed-in account that would join, or nil: the form makes a new account.
        let account: String?
        let name: String
        let email: String
        let error: String?
    }

    let sessions: DashboardSessions
    let failures: RateLimiter

    func boot(routes: any RoutesBuilder) throws {
        routes.get("dashboard", "join", use: show)
        routes.on(.POST, "dashboard", "join", body: .collect(maxSize: "16kb"), use: join)
    }

    func show(req: Request) async throws -> Response {
        try await page(req, name: "", email: "", error: nil)
    }

    func join(req: Request) async throws -> Response {
        let fields = FormFields(request: req)
        let code = try fields.text("code", label: "The invitation code", limit: 200)
        if let session = req.auth.get(DashboardSession.self) {
            do {
                let joined = try await failures.redeeming(req) {
                    try await Invitations.accept(code, userID: session.userID, name: session.name, on: req.db)
                }
                return req.seeOther(TeamTabs.path(joined.team))
            } catch let error as APIError {
                return try await page(req, name: "", email: "", error: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
            }
        }
        let name = try fields.text("name", label: "The account name", limit: 100)
        let email = try fields.text("email", label: "The email address", limit: 254)
        let password = try fields.raw("password", label: "The password", limit: 200)
        do {
            let user: UserRecord = try await failures.redeeming(req) {
                try Names.validate(name, what: "account name")
                let address = try Credentials.email(email)
                try await Invitations.check(code, name: name, email: address, on: req.db)
                let hash = try await req.passwordHashing.hash(try Credentials.password(password))
                return try await Invitations.redeem(code, name: name, email: address, passwordHash: hash, makeToken: false, on: req.db).1
            }
            try await AccountPages.audit(req, action: "dashboard.sign-in", actor: name, target: email.lowercased(), outcome: "ok")
            return try await sessions.signedIn(req, user: user, to: "/dashboard")
        } catch let error as APIError {
            return try await page(req, name: name, email: email, error: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
        } catch DashboardError.invalidForm(let reason) {
            return try await page(req, name: name, email: email, error: reason, status: .badRequest)
        }
    }

    private func page(_ req: Request, name: String, email: String, error: String?, status: HTTPStatus = .ok) async throws -> Response {
        if let session = req.auth.get(DashboardSession.self) {
            let chrome = try Chrome.make(req, title: "Join a team", section: "")
            return try await req.page("join", Page(chrome: chrome, account: session.name, name: "", email: "", error: error), status: status)
        }
        let token = req.preSessionCSRF(sessions: sessions)
        let chrome = Chrome(title: "Join a team", user: nil, csrf: token, section: "")
        let response = try await req.page("join", Page(chrome: chrome, account: nil, name: name, email: email, error: error), status: status)
        response.setPreSessionCookie(token, sessions: sessions)
        return response
    }
}
