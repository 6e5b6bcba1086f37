import CofferFormat
import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Vapor

/// Sets up an application: database and migrations, master key, first-start bootstrap, routes.
public func configure(_ app: Application, _ configuration: ServerConfiguration) async throws {
    app.useOwnThreadPool()
    app.http.server.configuration.hostname = configuration.hostname
    app.http.server.configuration.port = configuration.port
    app.http.server.configuration.idleTimeout = configuration.idleTimeAmount
    // Vapor's "Server started on …" gives way to the greeting (`Server.run`); its warnings stay.
    var serverLogger = Logger(label: "codes.vapor.server")
    if serverLogger.logLevel > .debug { serverLogger.logLevel = max(serverLogger.logLevel, .warning) }
    app.http.server.configuration.logger = serverLogger
    app.routes.defaultMaxBodySize = "1mb"
    // Before anything else: a malformed list must stop the start, not quietly trust nobody.
    app.trustedProxies = try configuration.trustedProxies.map { try TrustedProxies(parsing: $0) } ?? .none
    RefusedMultipart.install()  // MultipartKit 4.7.1 crashes on some bodies: see RefusedMultipart
    // Before anything is written: an object store that refuses the credentials or has no such
    // bucket stops the start with one line. (The folder is made after the data folder, which is private.)
    let bucket = try await configuration.objectStore.asyncMap { try await S3BlobStore.open($0, app: app) }

    try await configureDatabase(app, configuration)
    let clockOffset = configuration.clockOffset
    let clock: @Sendable () -> Date = { Date().addingTimeInterval(clockOffset) }
    let startSkew = try await ClockSkew.check(on: app.db, clock: clock)

    let masterKey = try await MasterKey.loadChecked(configuration, on: app.db, logger: app.logger)
    try await Bootstrap.run(app, configuration: configuration)
    let signer = try await ManifestSigner.loadOrCreate(masterKey: masterKey, on: app.db)

    let metrics = ServerMetrics()
    let usage = UsageCounter()
    // Refused device requests are audited one row a minute per kind; the repeats are added often.
    let refusals = RefusalLog()
    app.refusals = refusals
    app.lifecycle.use(PeriodicWork(every: 10, failure: "refusal counts not written; kept for the next try",
                                   atShutdown: { db, _ in try await refusals.flush(on: db) }) { db, _ in try await refusals.flush(on: db) })
    if let startSkew { metrics.clockSkew(startSkew.skew) }
    app.lifecycle.use(PeriodicWork(every: 300, failure: "clock not compared with the database's; trying again") { db, logger in
        guard let measured = try await ClockSkew.measure(on: db, clock: clock) else { return }
        metrics.clockSkew(measured.skew)
        if measured.exceeds(ClockSkew.limit) { logger.warning("\(measured.description): synchronise this host's clock (NTP)") }
    })
    let authFailures = RateLimiter(perMinute: configuration.authFailuresPerAddressPerMinute)
    // Usage counts are flushed periodically and at shutdown; what is not flushed stays for the next try.
    app.lifecycle.use(PeriodicWork(every: configuration.usageFlushInterval, failure: "usage counts not flushed; kept for the next try",
                                   atShutdown: { db, _ in try await usage.flush(on: db) }) { db, _ in try await usage.flush(on: db) })
    let store: any BlobStore = try bucket ?? FolderBlobStore(root: configuration.resolvedBlobDirectory)
    app.blobStore = store
    try await store.removeStaleUploads(olderThan: 3600)
    if configuration.blobCollectionInterval > 0 {
        let collector = BlobCollector(store: store, grace: configuration.blobGracePeriod)
        app.lifecycle.use(PeriodicWork(every: configuration.blobCollectionInterval, failure: "blob collection failed") { db, logger in
            let removed = try await collector.collect(on: db)
            if !removed.isEmpty { logger.info("collected \(removed.count) unreferenced blobs") }
        })
    }

    app.middleware = Middlewares()
    // Outermost: a shutdown waits for every handler of the main port (registered last below, so
    // that its shutdown comes first).
    let inFlight = RequestsInFlight()
    app.middleware.use(inFlight)
    app.middleware.use(MetricsMiddleware(metrics: metrics))
    app.middleware.use(ProtocolSwitch.Middleware())
    app.middleware.use(APIErrorMiddleware(routes: app.routes))
    app.middleware.use(NonJSONBodies())

    try app.register(collection: SystemController(metrics: metrics))
    let credentials = AppCredentials(failures: authFailures)
    let revocations = AttestationRevocations()
    app.attestationRevocations = revocations
    try await revocations.refresh(on: app.db)
    app.lifecycle.use(PeriodicWork(every: 60, failure: "attestation revocation list not reloaded; trying again") { db, _ in
        try await revocations.refresh(on: db)
        try await AttestationChallenges.removeExpired(on: db)
        try await DeviceAttestation.forgetUnusedInstalls(on: db)
    })
    let challenges = AttestationChallenges(masterKey: masterKey)
    app.attestationChallenges = challenges
    try app.register(collection: AttestationController(
        credentials: credentials, challenges: challenges,
        perAddress: RateLimiter(perMinute: configuration.deviceRequestsPerAddressPerMinute)))
    try app.register(collection: DeliveryController(
        masterKey: masterKey, credentials: credentials,
        perAddress: RateLimiter(perMinute: configuration.deviceRequestsPerAddressPerMinute),
        perApp: RateLimiter(perMinute: configuration.deliveriesPerAppPerMinute),
        perDevice: RateLimiter(perMinute: configuration.deliveriesPerDevicePerMinute),
        refusals: refusals, metrics: metrics, usage: usage,
        attestation: DeviceAttestation(roots: configuration.attestationRoots ?? .embedded, revocations: revocations, metrics: metrics,
                                       challenges: challenges)))
    let blobs = BlobController(store: store, maximumSize: configuration.maximumBlobSize, teamQuota: configuration.teamQuotaBytes,
                               metrics: metrics, usage: usage, misses: RateLimiter(perMinute: configuration.blobMissesPerAddressPerMinute),
                               lookups: RateLimiter(perMinute: configuration.blobMissesPerAddressPerMinute),
                               streams: StreamSlots(limit: configuration.resolvedBlobStreams, perAddress: configuration.blobStreamsPerAddress),
                               leaseLifetime: configuration.uploadLeaseLifetime)
    try app.register(collection: PublicBlobRoutes(controller: blobs))
    let invitations = InvitationController(lifetime: configuration.invitationLifetime, failures: authFailures)
    try app.register(collection: InvitationController.PublicRoutes(controller: invitations))
    let manifests = ManifestService(signer: signer, lifetime: configuration.manifestLifetime, publicURL: configuration.publicURL)
    let endpoint = ManifestEndpoint(manifests: manifests, credentials: credentials, refusals: refusals, metrics: metrics)
    try app.register(collection: ManifestController(endpoint: endpoint))

    let authenticated = app.grouped(TokenAuthenticator(failures: authFailures, recent: RecentTokens()))
    try authenticated.register(collection: TeamController())
    try authenticated.register(collection: TokenController())
    try authenticated.register(collection: MemberController(invitationLifetime: configuration.invitationLifetime))
    try authenticated.register(collection: InvitationController.TeamRoutes(controller: invitations))
    let apps = AppController(credentials: credentials), keys = KeyController(masterKey: masterKey)
    try authenticated.register(collection: apps)
    try authenticated.register(collection: keys)
    try authenticated.register(collection: AuditController())
    try authenticated.register(collection: UploadRoutes(controller: blobs))
    try authenticated.register(collection: ModelFactsController())
    try authenticated.register(collection: CollectionController())
    let reportTargets = ReportTargets()
    let gate = RolloutGate(manifests: manifests, targets: reportTargets, metrics: metrics)
    app.lifecycle.use(PeriodicWork(every: configuration.rolloutCheckInterval, failure: "staged rollouts not checked; trying again") { db, logger in
        try await gate.check(on: db, logger: logger)
    })
    let reports = ReportBuffer(capacity: configuration.reportBufferRows)
    let retention = configuration.reportRetention
    app.lifecycle.use(PeriodicWork(every: configuration.reportFlushInterval, failure: "device reports not written; kept for the next try",
                                   atShutdown: { db, _ in try await reports.flush(on: db, retention: retention) },
                                   again: { reports.pendingRows >= reports.flushAtOnce },
                                   pauseBeforeAgain: configuration.reportFlushFollowUpPause) { db, _ in
        try await reports.flush(on: db, retention: retention)
    })
    let reportEndpoint = ReportEndpoint(
        credentials: credentials, buffer: reports, targets: reportTargets,
        perAddress: RateLimiter(perMinute: configuration.deviceRequestsPerAddressPerMinute),
        perApp: RateLimiter(perMinute: configuration.reportsPerAppPerMinute),
        perDevice: RateLimiter(perMinute: configuration.reportEventsPerDevicePerMinute),
        volume: ReportVolumeBudget(deviceRows: configuration.reportDevicesPerAppPerHour, failures: configuration.reportFailuresPerAppPerHour),
        refusals: refusals, metrics: metrics)
    try app.register(collection: ReportController(endpoint: reportEndpoint))
    // Both ports share one endpoint: its budgets, buffer and caches.
    if let devicePort = configuration.devicePort {
        try await DeviceListener.start(app, manifests: endpoint, reports: reportEndpoint, metrics: metrics, hostname: configuration.hostname,
                                       port: devicePort, idleTimeout: configuration.idleTimeAmount)
    }
    let deployments = DeploymentController(store: store, manifests: manifests, gate: gate)
    try authenticated.register(collection: deployments)

    // One budget of password guesses per account for every dashboard form that asks again.
    let passwordCheck = PasswordCheck(attempts: RateLimiter(perMinute: configuration.signInAttemptsPerMinute))
    try Dashboard.register(app, configuration: configuration, store: store, deployments: deployments, signer: signer,
                           admin: AdminPages(keys: keys, apps: apps, usage: usage, invitationLifetime: configuration.invitationLifetime,
                                             passwordCheck: passwordCheck, secureCookies: configuration.secureCookies),
                           invitations: invitations, masterKey: masterKey)
    app.lifecycle.use(inFlight)
}

/// Connects the database (PostgreSQL when a URL is given, else SQLite in the data folder) and runs
/// the migrations. Several instances may start at once on one PostgreSQL: Fluent's migration log
/// is a table, and each numbered migration runs once.
func configureDatabase(_ app: Application, _ configuration: ServerConfiguration) async throws {
    // The data folder holds the master key, the bootstrap token and the database: owner only.
    try DataFolder.prepare(configuration.dataDirectory)
    // Each migration's "Starting prepare" and "Finished prepare" is for debugging, not for every start.
    app.fluent.migrationLogLevel = .debug
    // SQL statements are logged with their values (password and token hashes, device IDs): at
    // trace, not at the debug level operators turn on to look at a problem.
    if let url = configuration.databaseURL {
        app.databases.use(try .postgres(url: url, sqlLogLevel: .trace), as: .psql)
    } else {
        app.databases.use(.sqlite(.file(configuration.dataDirectory + "/coffer.sqlite"), sqlLogLevel: .trace), as: .sqlite)
    }
    app.migrations.add(CreateAccounts())
    app.migrations.add(CreateAppsKeysBlobs())
    app.migrations.add(CreateBlobReferences())
    app.migrations.add(CreateDeployments())
    app.migrations.add(CreateModelFacts())
    app.migrations.add(AddDashboardAccounts())
    app.migrations.add(CreateUsageDaily())
    app.migrations.add(AddTrustBoundaries())
    app.migrations.add(AddRollouts())
    app.migrations.add(AddAttestation())
    app.migrations.add(AddPasswordToken())
    app.migrations.add(AddUploadReservations())
    app.migrations.add(AddAttestedPolicyDigest())
    app.migrations.add(AddTokenParents())
    app.migrations.add(AddInvitationIssuers())
    app.migrations.add(AddCurrentMasterKey())
    app.migrations.add(AddRolloutSequences())
    app.migrations.add(DropReportDeviceForeignKey())
    // Instances starting together on one PostgreSQL may race to create a table; the loser waits
    // and finds the migration recorded. On a loaded machine the winner's migrations take seconds:
    // the loser keeps trying for about 40 s.
    let attempts = 20
    for attempt in 1...attempts {
        do {
            try await app.autoMigrate()
            return
        } catch where attempt < attempts && configuration.databaseURL != nil && !DropReportDeviceForeignKey.isLockTimeout(error) {
            // (017's lock timeouts have had their own tries: the start fails, as documented.)
            app.logger.warning("migration attempt \(attempt) failed (another instance migrating?); retrying")
            try await Task.sleep(for: .milliseconds(500 * min(attempt, 4)))
        }
    }
}
