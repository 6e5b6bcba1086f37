import Fluent
import Vapor

/// Signing in and out, the first owner's set-up, and a member's first sign-in.
///
/// - `/dashboard/setup`: while nobody can sign in yet, whoever has the bootstrap token (compared in
///   constant time) gives the `admin` user an email address and password; then the page is gone.
/// - `/dashboard/welcome`: a member whose account has no password yet proves who they are with
///   one of their API tokens (the one `coffer member add` printed) and chooses email and password.
/// - `/dashboard/sign-in`: one generic error for an unknown address and a wrong password; rate
///   limited per client address (behind trusted proxies, the forwarded one) and per email address,
///   a browser that signed in to that address before counted apart (``KnownBrowsers``).
struct AccountPages: RouteCollection {
    struct FormPage: Encodable, Sendable {
        let chrome: Chrome
        let email: String
        let error: String?
    }

    let sessions: DashboardSessions
    let attempts: RateLimiter
    let knownBrowsers: KnownBrowsers

    /// A Bcrypt hash (of a random password, at the cost of real ones) checked when the address is
    /// unknown, so that both failures take as long. Made once a process, on a thread of Dispatch's
    /// as the dashboard is registered (``Dashboard/register(_:configuration:store:deployments:signer:admin:invitations:masterKey:)``),
    /// not at its first use: that was a sign-in's request, whose event loop, and every connection
    /// on it, waited for the Bcrypt hash.
    static let decoy: String = (try? Bcrypt.hash(Secrets.make(prefix: ""))) ?? ""

    init(sessions: DashboardSessions, attemptsPerMinute: Int, knownBrowsers: KnownBrowsers) {
        self.sessions = sessions
        self.knownBrowsers = knownBrowsers
        self.attempts = RateLimiter(perMinute: attemptsPerMinute)
    }

    func boot(routes: any RoutesBuilder) throws {
        let dashboard = routes.grouped("dashboard")
        dashboard.get("sign-in", use: signInForm)
        dashboard.on(.POST, "sign-in", body: .collect(maxSize: "16kb"), use: signIn)
        dashboard.on(.POST, "sign-out", body: .collect(maxSize: "16kb"), use: signOut)
        dashboard.get("setup", use: setupForm)
        dashboard.on(.POST, "setup", body: .collect(maxSize: "16kb"), use: setup)
        dashboard.get("welcome", use: welcomeForm)
        dashboard.on(.POST, "welcome", body: .collect(maxSize: "16kb"), use: welcome)
    }

    // MARK: - Sign in and out

    func signInForm(req: Request) async throws -> Response {
        if req.auth.has(DashboardSession.self) { return req.seeOther("/dashboard") }
        if try await !Credentials.anyoneCanSignIn(on: req.db) { return req.seeOther("/dashboard/setup") }
        return try await form(req, "sign-in", title: "Sign in", email: "", error: nil)
    }

    func signIn(req: Request) async throws -> Response {
        let fields = FormFields(request: req)
        let email = try fields.text("email", label: "The email address", limit: 254).lowercased()
        let password = try fields.raw("password", label: "The password", limit: 200)
        if let wait = limited(req) {
            return try await tooMany(req, "sign-in", title: "Sign in", email: email, wait: wait)
        }
        let user = email.isEmpty ? nil : try await UserRecord.query(on: req.db).filter(\.$email == email).first()
        // Counted for the address, or for this browser when it is known to the address and its password.
        let known = knownBrowsers.mac(presentedBy: req, email: email, passwordHash: user?.passwordHash)
        if !email.isEmpty, let wait = attempts.acquire(KnownBrowsers.budgetKey(email: email, mac: known)) {
            return try await tooMany(req, "sign-in", title: "Sign in", email: email, wait: wait)
        }
        // A stranger's check may not take the places kept for known browsers and signed-in members.
        let verified = try await req.passwordHashing.verify(password, created: user?.passwordHash ?? Self.decoy,
                                                            as: known == nil ? .stranger : .known)
        guard verified, let user, user.passwordHash != nil else {
            // What was typed as the address is kept only if it looks like one: a password typed
            // into the wrong field must not end up in the audit log.
            let typed = (try? Credentials.email(email)) ?? "(not an email address)"
            try await Self.audit(req, action: "dashboard.sign-in", actor: user?.name ?? typed, target: typed, outcome: "failed",
                                 reason: "wrong email address or password")
            return try await form(req, "sign-in", title: "Sign in", email: email,
                                  error: "The email address or the password is not right.", status: .unauthorized)
        }
        try await Self.audit(req, action: "dashboard.sign-in", actor: user.name, target: email, outcome: "ok")
        return try await signedIn(req, user: user)
    }

    func signOut(req: Request) async throws -> Response {
        let session = try req.dashboardSession()
        try await sessions.end(session.sessionID, on: req.db)
        let email = try await UserRecord.find(session.userID, on: req.db)?.email ?? session.name
        try await Self.audit(req, action: "dashboard.sign-out", actor: session.name, target: email, outcome: "ok")
        let response = req.seeOther("/dashboard/sign-in")
        response.cookies[sessions.cookieName] = sessions.expired()
        return response
    }

    // MARK: - First owner

    func setupForm(req: Request) async throws -> Response {
        guard try await !Credentials.anyoneCanSignIn(on: req.db) else { throw Abort(.notFound) }
        return try await form(req, "setup", title: "Set up Coffer", email: "", error: nil)
    }

    func setup(req: Request) async throws -> Response {
        guard try await !Credentials.anyoneCanSignIn(on: req.db) else { throw Abort(.notFound) }
        let fields = FormFields(request: req)
        let token = try fields.text("token", label: "The bootstrap token", limit: 200)
        let email = try fields.text("email", label: "The email address", limit: 254)
        let password = try fields.raw("password", label: "The password", limit: 200)
        if let wait = limited(req) {
            return try await tooMany(req, "setup", title: "Set up Coffer", email: email, wait: wait)
        }
        // Every unrevoked bootstrap token is compared, in constant time, whichever matches.
        let candidates = try await TokenRecord.query(on: req.db).filter(\.$name == "bootstrap").filter(\.$revokedAt == nil).all()
        guard let match = candidates.first(where: { Secrets.matches(token, hash: $0.tokenHash) }) else {
            return try await form(req, "setup", title: "Set up Coffer", email: email,
                                  error: "That is not the bootstrap token. It is in the data folder's bootstrap-token file, or in COFFER_BOOTSTRAP_TOKEN.",
                                  status: .forbidden)
        }
        let user = try await UserRecord.find(match.$user.id, on: req.db)
        guard let user else { throw Abort(.notFound) }
        user.passwordTokenID = try match.requireID()
        do {
            try await Credentials.set(email: Credentials.email(email), password: Credentials.password(password), for: user, on: req, db: req.db)
        } catch DashboardError.invalidForm(let reason) {
            return try await form(req, "setup", title: "Set up Coffer", email: email, error: reason, status: .badRequest)
        }
        try await Audit.record(on: req.db, teamID: nil, action: "dashboard.setup", actor: user.name, target: user.name, outcome: "ok")
        return try await signedIn(req, user: user)
    }

    // MARK: - A member's first sign-in

    func welcomeForm(req: Request) async throws -> Response {
        try await form(req, "welcome", title: "Choose your sign-in", email: "", error: nil)
    }

    func welcome(req: Request) async throws -> Response {
        let fields = FormFields(request: req)
        let token = try fields.text("token", label: "The API token", limit: 200)
        let email = try fields.text("email", label: "The email address", limit: 254)
        let password = try fields.raw("password", label: "The password", limit: 200)
        if let wait = limited(req) {
            return try await tooMany(req, "welcome", title: "Choose your sign-in", email: email, wait: wait)
        }
        // The API's own lookup: by the token's hash, unrevoked.
        guard let record = try await TokenRecord.query(on: req.db).filter(\.$tokenHash == Secrets.hash(token))
            .filter(\.$revokedAt == nil).with(\.$user).first() else {
            return try await form(req, "welcome", title: "Choose your sign-in", email: email,
                                  error: "That API token is not valid. Use one from coffer token create or coffer invitation accept.",
                                  status: .forbidden)
        }
        let user = record.user
        guard user.passwordHash == nil else {
            return try await form(req, "welcome", title: "Choose your sign-in", email: email,
                                  error: "This account already has a password: sign in with it.", status: .conflict)
        }
        user.passwordTokenID = try record.requireID()
        do {
            try await Credentials.set(email: Credentials.email(email), password: Credentials.password(password), for: user, on: req, db: req.db)
        } catch DashboardError.invalidForm(let reason) {
            return try await form(req, "welcome", title: "Choose your sign-in", email: email, error: reason, status: .badRequest)
        }
        try await Audit.record(on: req.db, teamID: nil, action: "dashboard.welcome", actor: user.name, target: user.name, outcome: "ok")
        return try await signedIn(req, user: user)
    }

    // MARK: - Shared steps

    private func form(_ req: Request, _ template: String, title: String, email: String, error: String?, status: HTTPStatus = .ok) async throws -> Response {
        let token = req.preSessionCSRF(sessions: sessions)
        let chrome = Chrome(title: title, user: nil, csrf: token, section: "")
        let response = try await req.page(template, FormPage(chrome: chrome, email: email, error: error), status: status)
        response.setPreSessionCookie(token, sessions: sessions)
        return response
    }

    /// The form again, refused for too many attempts: `wait` seconds.
    private func tooMany(_ req: Request, _ template: String, title: String, email: String, wait: Int) async throws -> Response {
        try await form(req, template, title: title, email: email, error: "Too many attempts. Wait \(wait) seconds and try again.",
                       status: .tooManyRequests)
    }

    /// Audits a sign-in or sign-out with the client's address (behind trusted proxies, the
    /// forwarded one). Never the password, the session token or the CSRF token.
    static func audit(_ req: Request, action: String, actor: String, target: String, outcome: String, reason: String? = nil) async throws {
        let client = "client " + req.clientAddress
        try await Audit.record(on: req.db, teamID: nil, action: action, actor: actor, target: target, outcome: outcome,
                               reason: reason.map { "\($0); \(client)" } ?? client)
    }

    /// Counts an attempt from this client address; the seconds to wait when over the limit.
    private func limited(_ req: Request) -> Int? {
        attempts.acquire("ip:" + AddressBudget.key(req.clientAddress))
    }

    /// Starts the session and marks this browser as known to the account's email address and password.
    private func signedIn(_ req: Request, user: UserRecord) async throws -> Response {
        let response = try await sessions.signedIn(req, user: user, to: "/dashboard")
        knownBrowsers.remember(user, on: response)
        return response
    }
}
