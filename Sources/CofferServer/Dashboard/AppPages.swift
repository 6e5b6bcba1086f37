import Vapor

/// `/dashboard/teams/TEAM/apps`: the team's apps; registering one, choosing the collections it may
/// read, rotating its credential, revoking it. Each change runs the API's code (``AppController``).
///
/// A new or rotated credential is shown once, in the page that answers the form (never in a
/// URL, never stored: only its hash is); the page is `no-store`, so after leaving it the
/// credential is gone. Both forms ask for the member's current password: a credential outlives the
/// session, so a stolen session cookie alone must not be able to make one.
struct AppPages: RouteCollection {
    struct Row: Encodable, Sendable {
        let id: String
        let name: String
        let platform: String
        let bundleID: String
        let created: String
        let revoked: String
        let live: Bool
        /// The collections it may read, comma-separated ("" for none).
        let collections: String
        let rotatePath: String
        let revokePath: String
        let collectionsPath: String
        /// The attestation policy in one line, and its fields for the form.
        let attestation: String
        let policy: AttestationSettings
        let digests: String
        let attestationPath: String
    }
    /// A credential shown once, with what the app needs beside it.
    struct Shown: Encodable, Sendable {
        let heading: String
        let appName: String
        let appID: String
        let credential: String
    }
    struct Form: Encodable, Sendable {
        let name: String
        let platform: String
        let bundleID: String
        var collections = ""

        static let empty = Form(name: "", platform: "ios", bundleID: "")
    }
    struct Page: Encodable, Sendable {
        let chrome: Chrome
        let tabs: TeamTabs
        let team: String
        let canChange: Bool
        let action: String
        let apps: [Row]
        let platforms: [String]
        let form: Form
        let shown: Shown?
        let error: String?
    }

    let apps: AppController
    /// Asks for the member's current password before a credential is made.
    let check: PasswordCheck

    func boot(routes: any RoutesBuilder) throws {
        let team = routes.grouped("dashboard", "teams", ":team", "apps")
        team.get(use: show)
        team.on(.POST, body: .collect(maxSize: "16kb"), use: register)
        team.on(.POST, ":app", "rotate", body: .collect(maxSize: "16kb"), use: rotate)
        team.on(.POST, ":app", "revoke", body: .collect(maxSize: "16kb"), use: revoke)
        team.on(.POST, ":app", "collections", body: .collect(maxSize: "16kb"), use: bind)
        team.on(.POST, ":app", "attestation", body: .collect(maxSize: "16kb"), use: attest)
    }

    /// `A, B` → `["A", "B"]`: the collections field of the forms.
    static func collectionList(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    func show(req: Request) async throws -> Response {
        try await page(req, form: .empty, shown: nil, error: nil)
    }

    func register(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .developer)
        let fields = FormFields(request: req)
        let form = Form(name: try fields.text("name", label: "The app name", limit: 100),
                        platform: try fields.text("platform", label: "The platform", limit: 20),
                        bundleID: try fields.text("bundleID", label: "The bundle identifier", limit: 100),
                        collections: try fields.text("collections", label: "The collections", limit: 10_000))
        if let refusal = try await check.refusal(req) {
            return try await page(req, form: form, shown: nil, error: refusal.sentence, status: refusal.status)
        }
        do {
            let body = AppController.CreateApp(name: form.name, platform: form.platform, bundleID: form.bundleID.isEmpty ? nil : form.bundleID,
                                               collections: Self.collectionList(form.collections))
            let app = try await AppController.register(body, in: team, actor: try req.user().name, on: req.db)
            try await req.renewCSRF()
            return try await page(req, form: .empty, shown: Self.shown(app, heading: "\(app.name) is registered"), error: nil)
        } catch let error as APIError where error.status != .forbidden {
            return try await page(req, form: form, shown: nil, error: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
        }
    }

    func rotate(req: Request) async throws -> Response {
        // The role first (a viewer gets 403 whatever the password), then the password.
        _ = try await AppController.app(req, requiring: .developer)
        if let refusal = try await check.refusal(req) {
            return try await page(req, form: .empty, shown: nil, error: refusal.sentence, status: refusal.status)
        }
        let app: AppController.AppView
        do {
            app = try await apps.rotate(req: req)
        } catch let error as APIError where error.status == .conflict {
            return try await page(req, form: .empty, shown: nil, error: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
        }
        try await req.renewCSRF()
        return try await page(req, form: .empty, shown: Self.shown(app, heading: "New credential for \(app.name)"), error: nil)
    }

    func bind(req: Request) async throws -> Response {
        let (team, app) = try await AppController.app(req, requiring: .developer)
        let text = try FormFields(request: req).text("collections", label: "The collections", limit: 10_000)
        // Asked again: what the app's credential (which ships in the app) may fetch outlives the session.
        if let refusal = try await check.refusal(req) {
            return try await page(req, form: .empty, shown: nil, error: refusal.sentence, status: refusal.status)
        }
        do {
            _ = try await AppController.update(app, in: team, collections: Self.collectionList(text), actor: try req.user().name,
                                               on: req.db, credentials: apps.credentials)
        } catch let error as APIError where error.status == .badRequest {
            return try await page(req, form: .empty, shown: nil, error: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
        }
        return req.seeOther(TeamTabs.path(team.name, "apps"))
    }

    /// Sets an app's attestation policy from the form on its row.
    func attest(req: Request) async throws -> Response {
        let (team, app) = try await AppController.app(req, requiring: .developer)
        // Asked again: a policy of none lets the extracted credential alone fetch keys, for good.
        if let refusal = try await check.refusal(req) {
            return try await page(req, form: .empty, shown: nil, error: refusal.sentence, status: refusal.status)
        }
        let fields = FormFields(request: req)
        let optional = { (name: String, label: String) throws -> String? in
            let text = try fields.text(name, label: label, limit: 200).trimmingCharacters(in: .whitespaces)
            return text.isEmpty ? nil : text
        }
        do {
            guard let policy = AttestationSettings.Policy(rawValue: try fields.text("policy", label: "The policy", limit: 40)) else {
                throw APIError.invalid("the policy must be none, apple-app-attest or android-key-attestation")
            }
            let digests = try fields.text("digests", label: "The signing certificate digests", limit: 2_000)
                .split(whereSeparator: { $0 == "," || $0 == "\n" || $0 == "\r" || $0 == " " }).map(String.init)
            let settings = AttestationSettings(
                policy: policy, appleTeamID: try optional("appleTeamID", "The Apple Team ID"), bundleID: try optional("attestBundleID", "The bundle ID"),
                appleEnvironment: try optional("appleEnvironment", "The environment"), packageName: try optional("packageName", "The package name"),
                signingCertificateDigests: digests.isEmpty ? nil : digests, minimumSecurityLevel: try optional("securityLevel", "The security level"),
                allowUnlockedDevices: try optional("allowUnlocked", "Unlocked devices") == "on" ? true : nil)
            _ = try await AppController.update(app, in: team, collections: nil, attestation: settings, actor: try req.user().name,
                                               on: req.db, credentials: apps.credentials)
        } catch let error as APIError where error.status == .badRequest {
            return try await page(req, form: .empty, shown: nil, error: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
        }
        return req.seeOther(TeamTabs.path(team.name, "apps"))
    }

    func revoke(req: Request) async throws -> Response {
        let team = try req.parameters.require("team")
        _ = try await apps.revoke(req: req)
        return req.seeOther(TeamTabs.path(team, "apps"))
    }

    static func shown(_ app: AppController.AppView, heading: String) -> Shown? {
        app.credential.map { Shown(heading: heading, appName: app.name, appID: app.id.uuidString.lowercased(), credential: $0) }
    }

    private func page(_ req: Request, form: Form, shown: Shown?, error: String?, status: HTTPStatus = .ok) async throws -> Response {
        let (team, role) = try await req.team(requiring: .viewer)
        let base = TeamTabs.path(team.name, "apps")
        let rows = try await apps.list(req: req).reversed().map { app in
            let id = app.id.uuidString.lowercased()
            return Row(id: id, name: app.name, platform: app.platform, bundleID: app.bundleID ?? "", created: CollectionPage.date(app.createdAt),
                       revoked: CollectionPage.date(app.revokedAt), live: app.revokedAt == nil,
                       collections: app.collections.joined(separator: ", "),
                       rotatePath: "\(base)/\(id)/rotate", revokePath: "\(base)/\(id)/revoke", collectionsPath: "\(base)/\(id)/collections",
                       attestation: app.attestation.summary, policy: app.attestation,
                       digests: (app.attestation.signingCertificateDigests ?? []).joined(separator: "\n"), attestationPath: "\(base)/\(id)/attestation")
        }
        return try await req.page("apps", Page(
            chrome: try Chrome.make(req, title: "Apps · \(team.name)", section: "team"), tabs: TeamTabs(team: team.name, current: "apps"),
            team: team.name, canChange: role >= .developer, action: base, apps: rows, platforms: AppController.platforms,
            form: form, shown: shown, error: error), status: status)
    }
}
