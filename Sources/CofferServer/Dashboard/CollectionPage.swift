import Fluent
import Vapor

/// What a collection's page shows: its models, its deployments (the active one first), and who
/// activated what when. Change forms appear only for a developer or an owner.
struct CollectionPage: Encodable, Sendable {
    struct Deployment: Encodable, Sendable {
        let id: String
        let name: String
        let status: String
        let isActive: Bool
        let models: [ModelLine]
        let rules: [String]
        let problems: [String]
        let createdBy: String
        let createdAt: String
        let canActivate: Bool
        let canArchive: Bool
    }
    struct ModelLine: Encodable, Sendable {
        let name: String
        let sha256: String
        let size: String
    }
    struct Activation: Encodable, Sendable {
        let sequence: Int64
        let deployment: String
        let kind: String
        let actor: String
        let at: String
    }

    let chrome: Chrome
    let team: String
    let identifier: String
    let description: String
    /// A model name and its page (``ModelPage``).
    struct ModelLink: Encodable, Sendable {
        let name: String
        let path: String
    }

    let models: [ModelLink]
    let sequence: Int64
    let path: String
    let canChange: Bool
    let canRollBack: Bool
    let active: String?
    let deployments: [Deployment]
    let history: [Activation]
    /// Devices reporting each deployment for the first time, per hour (``AdoptionChart``).
    let chart: BarChart

    static func make(_ req: Request, team: TeamRecord, collection: CollectionRecord, store: any BlobStore) async throws -> CollectionPage {
        let (_, role) = try await req.team(requiring: .viewer)
        let canChange = role >= .developer
        let rows = try await DeploymentRecord.query(on: req.db).filter(\.$collection.$id == collection.requireID())
            .sort(\.$createdAt, .descending).limit(200).all()
        var deployments: [Deployment] = []
        for row in rows {
            let view = try await DeploymentView.make(row, in: collection, store: store, on: req.db)
            let isActive = collection.activeDeploymentID == row.id
            deployments.append(Deployment(
                id: view.id.uuidString.lowercased(), name: view.name, status: view.status, isActive: isActive,
                models: view.models.sorted { $0.key < $1.key }.map { ModelLine(name: $0.key, sha256: String($0.value.sha256.prefix(12)), size: Self.size($0.value.size)) },
                rules: view.rules.map { rule in
                    rule.condition + " → " + rule.models.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.sha256.prefix(12))…" }.joined(separator: ", ")
                },
                problems: view.problems.map(DashboardErrorMiddleware.sentence),
                createdBy: view.createdBy, createdAt: Self.date(view.createdAt),
                canActivate: canChange && !isActive && view.problems.isEmpty,
                canArchive: canChange && !isActive && view.status != DeploymentRecord.Status.archived.rawValue))
        }
        deployments.sort { $0.isActive && !$1.isActive }
        let history = try await ActivationRecord.query(on: req.db).filter(\.$collection.$id == collection.requireID())
            .with(\.$deployment).sort(\.$sequence, .descending).limit(50).all()
            .map { Activation(sequence: $0.sequence, deployment: $0.deployment.name, kind: $0.kind, actor: $0.actor, at: Self.date($0.at)) }
        let active = deployments.first(where: \.isActive)?.name
        return CollectionPage(
            chrome: try Chrome.make(req, title: collection.identifier), team: team.name, identifier: collection.identifier,
            description: collection.description, models: collection.modelNames.map {
                ModelLink(name: $0, path: ModelPage.path(team: team.name, collection: collection.identifier, model: $0))
            }, sequence: collection.sequence,
            path: CollectionPages.path(team: team.name, collection: collection.identifier), canChange: canChange,
            canRollBack: canChange && active != nil && history.contains { $0.deployment != active },
            active: active, deployments: deployments, history: history, chart: try await AdoptionChart.make(collection: collection, on: req.db))
    }

    /// UTC, to the minute: what a team across time zones reads alike.
    static func date(_ date: Date?) -> String {
        guard let date else { return "" }
        // "yyyy-MM-dd HH:mm:ss", cut to the minute. A value type, shared by every request,
        // rather than a DateFormatter made per call (an activity page has 50 dates or more).
        return String(date.formatted(minuteStyle).prefix(16)) + " UTC"
    }

    private static let minuteStyle = Date.ISO8601FormatStyle(dateTimeSeparator: .space, timeZone: TimeZone(identifier: "UTC")!)
        .year().month().day().time(includingFractionalSeconds: false)

    static func size(_ bytes: Int64) -> String {
        ByteCountFormatter.string(fromByteCount: bytes, countStyle: .file)
    }
}
