import Fluent
import ModelInspection
import Vapor

/// `GET …/deployments/:deployment`: one deployment and every model version it names — model name,
/// size, SHA-256, the key that opens it, and what the team recorded is inside it (issue 8: the
/// ``ModelReport`` `coffer … --key` sent), or a note saying how to record that.
struct DeploymentPage: Encodable, Sendable {
    /// One model version, in full.
    struct Version: Encodable, Sendable {
        let model: String
        let sha256: String
        let size: String
        /// The exact byte count, when ``size`` rounds it.
        let bytes: String
        let keyID: String
        let hasFacts: Bool
        let facts: Facts?
        /// A line under the version (the model page says when it came and who uses it).
        var note = ""
        /// The model page: the container format, and what the previous version shares (delta updates).
        var chunks = ""
    }
    /// What is inside a model, as `coffer inspect` says it.
    struct Facts: Encodable, Sendable {
        let format: String
        let summary: String
        let details: String
    }
    struct Rule: Encodable, Sendable {
        let number: Int
        let condition: String
        let versions: [Version]
    }

    let chrome: Chrome
    let team: String
    let identifier: String
    let collectionPath: String
    let path: String
    let name: String
    let status: String
    let isActive: Bool
    let createdBy: String
    let createdAt: String
    let activatedAt: String
    let problems: [String]
    let defaults: [Version]
    let rules: [Rule]
    let canClone: Bool
    let canActivate: Bool
    /// A staged activation starts from another active deployment.
    let canStage: Bool
    /// Advance and halt, for developers while a staged rollout of this deployment runs.
    let canSteer: Bool
    let rollout: RolloutPanel

    /// The page of a deployment (path components are percent-encoded).
    static func path(team: String, collection: String, deployment: UUID) -> String {
        CollectionPages.path(team: team, collection: collection) + "/deployments/" + deployment.uuidString.lowercased()
    }

    static func make(_ req: Request, team: TeamRecord, collection: CollectionRecord, deployment: DeploymentRecord, store: any BlobStore) async throws -> DeploymentPage {
        let (_, role) = try await req.team(requiring: .viewer)
        let view = try await DeploymentView.make(deployment, in: collection, store: store, on: req.db)
        let isActive = collection.activeDeploymentID == deployment.id
        let canChange = role >= .developer
        let status = try await DeploymentStatus.make(deployment, rollout: view.rollout, on: req.db)
        let panel = RolloutPanel(status)
        let canActivate = canChange && !isActive && view.problems.isEmpty
        return DeploymentPage(
            chrome: try Chrome.make(req, title: deployment.name + " · " + collection.identifier), team: team.name, identifier: collection.identifier,
            collectionPath: CollectionPages.path(team: team.name, collection: collection.identifier),
            path: Self.path(team: team.name, collection: collection.identifier, deployment: try deployment.requireID()),
            name: view.name, status: view.status, isActive: isActive, createdBy: view.createdBy,
            createdAt: CollectionPage.date(view.createdAt), activatedAt: CollectionPage.date(view.activatedAt),
            problems: view.problems.map(DashboardErrorMiddleware.sentence), defaults: Self.versions(view.models),
            rules: view.rules.enumerated().map { Rule(number: $0.offset + 1, condition: $0.element.condition, versions: Self.versions($0.element.models)) },
            canClone: canChange, canActivate: canActivate, canStage: canActivate && collection.activeDeploymentID != nil,
            canSteer: canChange && panel.isStaged, rollout: panel)
    }

    private static func versions(_ models: [String: DeploymentView.Version]) -> [Version] {
        models.sorted { $0.key < $1.key }.map { version($0.key, $0.value) }
    }

    /// How the dashboard shows model version `version` of model `name`.
    static func version(_ name: String, _ version: DeploymentView.Version) -> Version {
        Version(model: name, sha256: version.sha256, size: CollectionPage.size(version.size), bytes: version.size < 1000 ? "" : String(version.size),
                keyID: version.keyID, hasFacts: version.facts != nil,
                facts: version.facts.map { report in
                    // An opaque file's summary is only its format again.
                    Facts(format: report.format.displayName, summary: report.summary == report.format.displayName ? "" : report.summary,
                          details: report.detailText.trimmingIndent())
                })
    }
}

/// The route of ``DeploymentPage``.
struct DeploymentPageRoute: RouteCollection {
    let store: any BlobStore

    func boot(routes: any RoutesBuilder) throws {
        routes.get("dashboard", "teams", ":team", "collections", ":collection", "deployments", ":deployment", use: show)
    }

    func show(req: Request) async throws -> Response {
        let (team, collection, deployment) = try await DeploymentController.deployment(req, requiring: .viewer)
        return try await req.page("deployment", try await DeploymentPage.make(req, team: team, collection: collection, deployment: deployment, store: store))
    }
}

private extension String {
    /// The lines without the indent they share (`coffer inspect` indents its details by two).
    func trimmingIndent() -> String {
        let lines = split(separator: "\n", omittingEmptySubsequences: false)
        let indent = lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { String($0.dropFirst(indent)) }.joined(separator: "\n")
    }
}
