import Fluent
import Vapor

/// `/dashboard/account`: who is signed in, and changing one's own password (the current one is
/// asked first). A change ends every session of the account, this browser's included, and signs
/// this browser in again with a new session: a copy of its old cookie is worth nothing after it.
/// It also makes every known-browser cookie of the account count as unknown (they are bound to the
/// password), so this browser is given a new one.
struct PasswordPage: RouteCollection {
    struct Page: Encodable, Sendable {
        let chrome: Chrome
        let name: String
        let email: String
        let changed: Bool
        let error: String?
    }

    /// Asks for the current password, with guesses from a stolen session limited.
    let check: PasswordCheck
    /// Starts the session that replaces this browser's after a change.
    let sessions: DashboardSessions
    /// Marks this browser as known to the new password.
    let knownBrowsers: KnownBrowsers

    func boot(routes: any RoutesBuilder) throws {
        routes.get("dashboard", "account", use: show)
        routes.on(.POST, "dashboard", "account", "password", body: .collect(maxSize: "16kb"), use: change)
    }

    func show(req: Request) async throws -> Response {
        try await page(req, changed: req.query[String.self, at: "changed"] == "1", error: nil)
    }

    func change(req: Request) async throws -> Response {
        let session = try req.dashboardSession()
        let fields = FormFields(request: req)
        let current = try fields.raw("current", label: "The current password", limit: 200)
        let replacement = try fields.raw("password", label: "The new password", limit: 200)
        let user: UserRecord
        switch try await check.verify(req, password: current) {
        case .success(let member): user = member
        case .failure(let refusal): return try await page(req, changed: false, error: refusal.sentence, status: refusal.status)
        }
        do {
            user.passwordHash = try await req.passwordHashing.hash(Credentials.password(replacement))
        } catch DashboardError.invalidForm(let reason) {
            return try await page(req, changed: false, error: reason, status: .badRequest)
        }
        try await req.db.transaction { db in
            try await user.update(on: db)
            try await DashboardSessions.endAll(of: session.userID, on: db)
        }
        try await Audit.record(on: req.db, teamID: nil, action: "dashboard.password", actor: user.name, target: user.name, outcome: "ok")
        let response = try await sessions.signedIn(req, user: user, to: "/dashboard/account?changed=1")
        knownBrowsers.remember(user, on: response)
        return response
    }

    private func page(_ req: Request, changed: Bool, error: String?, status: HTTPStatus = .ok) async throws -> Response {
        let session = try req.dashboardSession()
        let email = try await UserRecord.find(session.userID, on: req.db)?.email ?? ""
        return try await req.page("account", Page(
            chrome: try Chrome.make(req, title: "Your account", section: "account"), name: session.name, email: email,
            changed: changed, error: error), status: status)
    }
}
