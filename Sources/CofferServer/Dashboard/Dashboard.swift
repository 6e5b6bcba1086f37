import Vapor

/// The browser dashboard under `/dashboard`: server-rendered pages (Leaf) for the same teams,
/// collections and deployments as the API, with the API's roles.
///
/// Every dashboard route runs behind, outermost first: security headers, error pages, the session
/// cookie, and CSRF checking of every POST. Its stylesheet is public (the sign-in page uses it).
enum Dashboard {
    /// The path prefix of every dashboard route (the OpenAPI document describes the JSON API only).
    static let prefix = "dashboard"

    /// Sets up Leaf and Bcrypt and registers the dashboard's routes.
    static func register(
        _ app: Application, configuration: ServerConfiguration, store: any BlobStore,
        deployments: DeploymentController, signer: ManifestSigner, admin: AdminPages, invitations: InvitationController,
        masterKey: MasterKey
    ) throws {
        DashboardResources.configureLeaf(app)
        let hashing = PasswordHashing(threads: configuration.passwordHashingThreads, maximumWaiting: configuration.passwordHashingPlaces)
        app.passwordHashing = hashing
        app.lifecycle.use(PasswordHashingShutdown(hashing: hashing))
        // The decoy's Bcrypt hash, made off the event loops before a sign-in needs it.
        DispatchQueue.global(qos: .utility).async { _ = AccountPages.decoy }
        let sessions = DashboardSessions(lifetime: configuration.sessionLifetime, secureCookies: configuration.secureCookies)

        let securityHeaders = SecurityHeadersMiddleware(strictTransport: configuration.secureCookies)
        let stylesheet = try DashboardResources.stylesheet()
        let assets = app.grouped(securityHeaders)
        assets.get("dashboard", "assets", "dashboard.css") { _ -> Response in
            var headers = HTTPHeaders()
            headers.contentType = HTTPMediaType(type: "text", subType: "css", parameters: ["charset": "utf-8"])
            headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=300")
            return Response(status: .ok, headers: headers, body: .init(buffer: stylesheet))
        }
        // Scripts are files (the Content-Security-Policy allows no inline script), read once at start.
        for name in ["upload.js", "keys.js"] {
            let script = try DashboardResources.publicFile(name)
            assets.get("dashboard", "assets", .constant(name)) { _ -> Response in
                var headers = HTTPHeaders()
                headers.contentType = HTTPMediaType(type: "text", subType: "javascript", parameters: ["charset": "utf-8"])
                headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=300")
                return Response(status: .ok, headers: headers, body: .init(buffer: script))
            }
        }

        var pages = app.grouped(securityHeaders, DashboardErrorMiddleware(), SessionAuthenticator(sessions: sessions), CSRFMiddleware(sessions: sessions))
        // Every browser comes by the sign-in page: where a proxy's https is noticed.
        if !configuration.secureCookies { pages = pages.grouped(ForwardedHTTPSWarning()) }
        let knownBrowsers = KnownBrowsers(masterKey: masterKey, secureCookies: configuration.secureCookies)
        try pages.register(collection: AccountPages(sessions: sessions, attemptsPerMinute: configuration.signInAttemptsPerMinute,
                                                    knownBrowsers: knownBrowsers))
        try pages.register(collection: JoinPage(sessions: sessions, failures: invitations.failures))
        try pages.register(collection: CollectionPages(store: store))
        try pages.register(collection: DeploymentPages(deployments: deployments))
        try pages.register(collection: DevicePage())
        try pages.register(collection: SigningKeyPage(signer: signer))
        try pages.register(collection: PasswordPage(check: admin.passwordCheck, sessions: sessions, knownBrowsers: knownBrowsers))
        try pages.register(collection: TokenPages(check: admin.passwordCheck))
        try pages.register(collection: admin)
        try pages.register(collection: TeamPages())
        try pages.register(collection: ModelPageRoute(store: store))
        try pages.register(collection: DeploymentForms(deployments: deployments, maximumSize: configuration.maximumBlobSize))
        try pages.register(collection: DeploymentPageRoute(store: store))
        // Any other dashboard address a browser opens gets the dashboard's own "Not found" page,
        // not the API's JSON error (more specific routes always win over this one).
        pages.get("dashboard", "**") { _ -> Response in throw Abort(.notFound) }
        let uploads = app.grouped(securityHeaders, DashboardErrorMiddleware(), SessionAuthenticator(sessions: sessions),
                                  CSRFMiddleware(sessions: sessions, streamedForms: true))
        try uploads.register(collection: ModelUploadPage(store: store, maximumSize: configuration.maximumBlobSize, teamQuota: configuration.teamQuotaBytes,
                                                                leaseLifetime: configuration.uploadLeaseLifetime))
    }
}
