import Fluent
import Vapor

/// `POST /v1/device/reports`: devices report what became of the models of a deployment
/// (docs/ROLLOUTS.md). The device authenticates as for manifests (HTTP Basic: app ID, credential).
///
/// Refusals are cheap and come before anything is counted: the client address's budget, the body's
/// size (64 KiB) and shape (every event checked), the credential, the app's budget, the collections
/// (bound to the app), the deployments (activated, of that collection, naming that model), then each
/// device's budget. Accepted events go to ``ReportBuffer``; the database sees them at its next flush.
struct ReportController: RouteCollection {
    struct Answer: Content {
        let accepted: Int
        let duplicates: Int
    }

    let credentials: AppCredentials
    let buffer: ReportBuffer
    let targets: ReportTargets
    let perAddress: RateLimiter
    let perApp: RateLimiter
    let perDevice: RateLimiter
    let refusals: RefusalLog
    let metrics: ServerMetrics

    func boot(routes: any RoutesBuilder) throws {
        routes.on(.POST, "v1", "device", "reports", body: .collect(maxSize: "64kb"), use: receive)
    }

    func receive(req: Request) async throws -> Answer {
        if let wait = perAddress.acquire("address:" + req.clientAddress) { throw Self.tooMany(wait) }
        guard let (username, credential) = ManifestEndpoint.basicCredentials(req.headers.first(name: .authorization)),
              let appID = UUID(hexText: username)
        else { throw APIError(.unauthorized, "invalid_credential", "send the app ID and credential with HTTP Basic authentication") }
        let now = Date()
        let body = req.body.data.map { Array($0.readableBytesView) } ?? []
        let reports: [DeviceReport]
        do {
            reports = try ReportBatch(events: ReportBatchReader.events(in: body)).reports(now: now)
        } catch {
            throw APIError.invalid(error.reason + " (the body is {\"events\": [...]}; docs/ROLLOUTS.md)")
        }
        let app = try await authenticate(appID: appID, credential: credential, on: req)
        if let wait = perApp.acquire("app:\(app.id)") { throw Self.tooMany(wait) }
        for (index, report) in reports.enumerated() where !app.collections.contains(report.collection) {
            try await refusals.record(.init(teamID: app.teamID, action: "device.report", actor: "app:\(app.id)",
                                            target: String(report.collection.prefix(100)), reason: "collection_not_bound",
                                            deviceID: report.deviceID, key: "report_not_bound|\(app.id)"), on: req.db)
            throw APIError.forbidden("collection_not_bound", "event \(index): this app is not bound to collection \(report.collection)")
        }
        for (index, report) in reports.enumerated() {
            guard let target = try await targets.target(report.deploymentID, on: req.db),
                  target.teamID == app.teamID, target.collection == report.collection
            else { throw APIError(.unprocessableEntity, "unknown_deployment", "event \(index): no activated deployment of \(report.collection) has that ID") }
            guard target.models.contains(report.model) else {
                throw APIError(.unprocessableEntity, "unknown_model", "event \(index): that deployment has no model \(report.model)")
            }
        }
        for (device, count) in Dictionary(reports.map { ($0.deviceID, 1) }, uniquingKeysWith: +) {
            if let wait = perDevice.acquire("device:\(app.id):\(device)", cost: count) { throw Self.tooMany(wait) }
        }
        guard let (accepted, duplicates) = buffer.add(reports, appID: app.id, stage: targets.stage(of:), now: now) else {
            throw APIError(.serviceUnavailable, "reports_backlog", "reports are not being written at the moment; retry later",
                           headers: ["Retry-After": "30"])
        }
        for (outcome, count) in Dictionary(reports.map { ($0.outcome, 1) }, uniquingKeysWith: +) {
            metrics.reports(outcome: outcome, count: count)
        }
        return Answer(accepted: accepted, duplicates: duplicates)
    }

    /// The app; 401 for an unknown app or wrong credential, 403 for a rotated-away credential or a
    /// revoked app (the manifest route's answers).
    private func authenticate(appID: UUID, credential: String, on req: Request) async throws -> AppCredentials.App {
        if let app = credentials.cachedApp(appID: appID, credential: credential) { return app }
        return try await credentials.authenticate(appID: appID, credential: credential, on: req.db)
    }

    static func tooMany(_ wait: Int) -> APIError {
        APIError(.tooManyRequests, "rate_limited", "too many reports; retry in \(wait) s", headers: ["Retry-After": "\(wait)"])
    }
}
