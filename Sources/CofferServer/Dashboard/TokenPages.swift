import Vapor

/// `/dashboard/tokens`: the signed-in member's own API tokens (for the CLI and CI): list, create
/// (the value shown once, in the page that answers the form), revoke. The API's code
/// (``TokenController``) does the work.
///
/// Creating a token asks for the member's current password: a token outlives the session, so a
/// stolen session cookie alone must not be able to turn itself into lasting access.
struct TokenPages: RouteCollection {
    struct Row: Encodable, Sendable {
        let name: String
        let prefix: String
        let created: String
        let lastUsed: String
        let revoked: String
        let live: Bool
        let revokePath: String
    }
    struct Shown: Encodable, Sendable {
        let name: String
        let token: String
    }
    struct Page: Encodable, Sendable {
        let chrome: Chrome
        let tokens: [Row]
        let name: String
        let shown: Shown?
        let error: String?
    }

    /// Asks for the current password before a token is made.
    let check: PasswordCheck

    func boot(routes: any RoutesBuilder) throws {
        let tokens = routes.grouped("dashboard", "tokens")
        tokens.get(use: show)
        tokens.on(.POST, body: .collect(maxSize: "16kb"), use: create)
        tokens.on(.POST, ":token", "revoke", body: .collect(maxSize: "16kb"), use: revoke)
    }

    func show(req: Request) async throws -> Response {
        try await page(req, name: "", shown: nil, error: nil)
    }

    func create(req: Request) async throws -> Response {
        let user = try req.user()
        let fields = FormFields(request: req)
        let name = try fields.text("name", label: "The token name", limit: 100)
        if let refusal = try await check.refusal(req) {
            return try await page(req, name: name, shown: nil, error: refusal.sentence, status: refusal.status)
        }
        do {
            // A password chosen with an API token is only as good as that token: what it makes
            // hangs on that token and goes when it is revoked (``PasswordToken``).
            let created = try await TokenController.create(name: name, for: user, parent: try await PasswordToken.chosenBy(user.userID, on: req.db),
                                                           on: req.db)
            try await req.renewCSRF()
            return try await page(req, name: "", shown: Shown(name: created.name, token: created.token), error: nil)
        } catch let error as APIError where error.status != .forbidden {
            return try await page(req, name: name, shown: nil, error: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
        }
    }

    func revoke(req: Request) async throws -> Response {
        _ = try await TokenController().revoke(req: req)
        return req.seeOther("/dashboard/tokens")
    }

    private func page(_ req: Request, name: String, shown: Shown?, error: String?, status: HTTPStatus = .ok) async throws -> Response {
        let rows = try await TokenController().list(req: req).reversed().map { token in
            Row(name: token.name, prefix: token.prefix, created: CollectionPage.date(token.createdAt),
                lastUsed: token.lastUsedAt == nil ? "never" : CollectionPage.date(token.lastUsedAt), revoked: CollectionPage.date(token.revokedAt), live: token.revokedAt == nil,
                revokePath: "/dashboard/tokens/\(token.id.uuidString.lowercased())/revoke")
        }
        return try await req.page("tokens", Page(
            chrome: try Chrome.make(req, title: "API tokens", section: "tokens"), tokens: rows, name: name, shown: shown, error: error), status: status)
    }
}
