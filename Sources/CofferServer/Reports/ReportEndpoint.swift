import Fluent
import NIOCore
import Vapor

/// `POST /v1/device/reports` apart from any HTTP stack, shared by Vapor's route
/// (``ReportController``) and the lean device listener (``DeviceHTTPHandler``), so both answer with
/// the same statuses, error codes, reasons, budgets, refusal audit and metrics (docs/ROLLOUTS.md).
///
/// Refusals are cheap and come before anything is counted: the client address's budget, the body's
/// size (``maximumBody``, checked by the caller before it buffers) and shape (every event checked),
/// the credential, the app's budget, the collections (bound to the app), the deployments
/// (activated, of that collection, naming that model), then each device's budget. Accepted events
/// go to ``ReportBuffer``; the database sees them at its next flush.
///
/// When the app and every deployment named are cached (``AppCredentials/cachedApp(appID:credential:)``,
/// ``ReportTargets/cachedTarget(_:)``) the answer is made on the caller's thread
/// (``cachedAnswer(_:)``), with no task and no database; otherwise ``answer(_:on:)`` asks the database.
struct ReportEndpoint: Sendable {
    /// The most bytes a report body may have (64 KiB); more is 413 `too_large`.
    static let maximumBody = 65_536

    let credentials: AppCredentials
    let buffer: ReportBuffer
    let targets: ReportTargets
    let perAddress: RateLimiter
    let perApp: RateLimiter
    let perDevice: RateLimiter
    /// New device rows and stored failures per app per hour.
    let volume: ReportVolumeBudget
    let refusals: RefusalLog
    let metrics: ServerMetrics

    /// A request, checked: who sends it and its events.
    struct Request: Sendable {
        /// The client's address (``TrustedProxies``), whose failure budget a wrong credential spends.
        let address: String
        let appID: UUID
        let credential: String
        let reports: [DeviceReport]
        let now: Date
    }

    /// 413 for a body over ``maximumBody``: the error Vapor's body collection throws, so both ports
    /// answer it alike (`too_large`, "Payload Too Large").
    static let tooLarge = Abort(.payloadTooLarge)

    /// Counts the request against the address's budget, reads the credentials and the body; 429,
    /// 401 or 400 (naming the event and field). `body` is at most ``maximumBody`` bytes.
    func parse(address: String, authorization: String?, body: [UInt8]) throws -> Request {
        // Vapor's body collection does not check a body that arrives in one read: checked here for both ports.
        guard body.count <= Self.maximumBody else { throw Self.tooLarge }
        if let wait = perAddress.acquire("address:" + AddressBudget.key(address)) { throw Self.tooMany(wait) }
        guard let (username, credential) = ManifestEndpoint.basicCredentials(authorization), let appID = UUID(hexText: username) else {
            throw APIError(.unauthorized, "invalid_credential", "send the app ID and credential with HTTP Basic authentication")
        }
        let now = Date()
        do {
            let reports = try ReportBatchReader.batch(in: body).reports(now: now, appID: appID)
            return Request(address: address, appID: appID, credential: credential, reports: reports, now: now)
        } catch {
            throw APIError.invalid(error.reason + " (the body is {\"events\": [...]}; docs/ROLLOUTS.md)")
        }
    }

    /// The answer from memory, or nil (nothing counted) when the database must be asked
    /// (``answer(_:on:)``): the app is not cached and fresh, an event names a collection the app is
    /// not bound to (the refusal is audited in the database), or a deployment is not cached.
    func cachedAnswer(_ request: Request) throws -> ReportAnswer? {
        let reports = request.reports
        // Fields are read one at a time: reading a whole report out of the array copied it (five
        // Strings retained and released), several times an event.
        guard let app = credentials.cachedApp(appID: request.appID, credential: request.credential),
              Self.allBound(reports, to: app)
        else { return nil }
        // A batch names one deployment or two: a list, looked up by comparing, not a dictionary.
        var known: [(id: UUID, target: ReportTargets.Target)] = []
        for index in reports.indices {
            let deploymentID = reports[index].deploymentID
            guard !known.contains(where: { $0.id == deploymentID }) else { continue }
            guard let target = targets.cachedTarget(deploymentID) else { return nil }
            known.append((deploymentID, target))
        }
        if let wait = perApp.acquire("app:" + app.id.lowercaseHexText) { throw Self.tooMany(wait) }
        for index in reports.indices {
            let deploymentID = reports[index].deploymentID
            try Self.check(known.first { $0.id == deploymentID }?.target, collection: reports[index].collection, model: reports[index].model,
                           sha256: reports[index].sha256, index: index, app: app)
        }
        return try accept(request, app: app)
    }

    /// Whether every report names a collection `app` is bound to; the collection is looked up
    /// once for a run of events that name the same one (the usual batch names one).
    private static func allBound(_ reports: [DeviceReport], to app: AppCredentials.App) -> Bool {
        var bound: String?
        for index in reports.indices {
            let collection = reports[index].collection
            if let bound, collection.hasSameBytes(as: bound) { continue }
            guard app.isBound(to: collection) else { return false }
            bound = collection
        }
        return true
    }

    /// The answer, asking the database as needed: for the app, for deployments not cached, and to
    /// audit an event naming a collection the app is not bound to (403 `collection_not_bound`, one
    /// row a minute per app).
    func answer(_ request: Request, on db: any Database) async throws -> ReportAnswer {
        let app = try await credentials.authenticate(appID: request.appID, credential: request.credential, address: request.address, on: db)
        if let wait = perApp.acquire("app:" + app.id.lowercaseHexText) { throw Self.tooMany(wait) }
        for (index, report) in request.reports.enumerated() where !app.isBound(to: report.collection) {
            try await refusals.record(.init(teamID: app.teamID, action: "device.report", actor: "app:\(app.id)",
                                            target: String(report.collection.prefix(100)), reason: "collection_not_bound",
                                            deviceID: report.deviceID, key: "report_not_bound|\(app.id)"), on: db)
            throw APIError.forbidden("collection_not_bound", "event \(index): this app is not bound to collection \(report.collection)")
        }
        for (index, report) in request.reports.enumerated() {
            try Self.check(try await targets.target(report.deploymentID, on: db), collection: report.collection, model: report.model,
                           sha256: report.sha256, index: index, app: app)
        }
        return try accept(request, app: app)
    }

    /// 422 unless `target` is an activated deployment of the app's team and of the event's
    /// `collection` that has the event's `model`, in a version with the event's `sha256`. Names
    /// are compared as bytes (as the database compares them), not as canonically equivalent
    /// Strings: a look-alike spelling would be counted as a model of its own.
    private static func check(_ target: ReportTargets.Target?, collection: String, model: String, sha256: ModelDigest, index: Int,
                              app: AppCredentials.App) throws {
        guard let target, target.teamID == app.teamID, target.collection.hasSameBytes(as: collection) else {
            throw APIError(.unprocessableEntity, "unknown_deployment", "event \(index): no activated deployment of \(collection) has that ID")
        }
        guard let digests = target.digests(of: model), digests.contains(sha256) else {
            throw APIError(.unprocessableEntity, "unknown_model",
                           "event \(index): that deployment has no model \(model) with that SHA-256")
        }
    }

    /// Each device's budget, then the buffer (503 when full), then the metrics.
    private func accept(_ request: Request, app: AppCredentials.App) throws -> ReportAnswer {
        let reports = request.reports
        let devicePrefix = "device:" + app.id.lowercaseHexText + ":"
        // Events per device, in the order devices first come (a batch is usually one device's).
        var devices: [(id: String, count: Int)] = []
        for index in reports.indices {
            let deviceID = reports[index].deviceID
            if let at = devices.firstIndex(where: { $0.id == deviceID }) {
                devices[at].count += 1
            } else {
                devices.append((deviceID, 1))
            }
        }
        if let wait = volume.admitRows(reports, appID: app.id, now: request.now) {
            throw APIError(.tooManyRequests, "rate_limited", "too many new devices reported by this app; retry in \(wait) s",
                           headers: ["Retry-After": "\(wait)"])
        }
        for (device, count) in devices {
            if let wait = perDevice.acquire(devicePrefix + device, cost: count) { throw Self.tooMany(wait) }
        }
        var failures = 0
        for index in reports.indices where reports[index].outcome == .failed { failures += 1 }
        var allowance = volume.storableFailures(failures, appID: app.id, now: request.now)
        let added = buffer.add(reports, appID: app.id, teamID: app.teamID, stage: targets.stage(of:), failureAllowance: &allowance, now: request.now)
        volume.refundFailures(allowance, appID: app.id)  // duplicates and a full buffer store none
        let accepted: Int, duplicates: Int
        switch added {
        case .added(let new, let repeated):
            (accepted, duplicates) = (new, repeated)
        case .full:
            throw APIError(.serviceUnavailable, "reports_backlog", "reports are not being written at the moment; retry later",
                           headers: ["Retry-After": "30"])
        case .teamShare:
            throw APIError(.serviceUnavailable, "reports_backlog",
                           "this team's reports waiting to be written fill its share of the server's buffer; retry later",
                           headers: ["Retry-After": "30"])
        }
        var counts = [Int](repeating: 0, count: ReportOutcome.allCases.count)
        for index in reports.indices { counts[reports[index].outcome.bit.trailingZeroBitCount] += 1 }  // bits 1, 2, 4, 8: allCases order
        for (outcome, count) in zip(ReportOutcome.allCases, counts) where count > 0 { metrics.reports(outcome: outcome, count: count) }
        return ReportAnswer(accepted: accepted, duplicates: duplicates)
    }

    static func tooMany(_ wait: Int) -> APIError {
        APIError(.tooManyRequests, "rate_limited", "too many reports; retry in \(wait) s", headers: ["Retry-After": "\(wait)"])
    }
}
