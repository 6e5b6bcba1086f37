import Fluent
import Vapor

/// The collections of the signed-in user's teams, the form that creates one, and a collection's
/// page: its models, its deployments with the active one marked, and its activation history.
///
/// Every page and action runs the API's role check (`Request.team(requiring:)`): a viewer sees,
/// a developer and an owner change.
struct CollectionPages: RouteCollection {
    struct TeamSection: Encodable, Sendable {
        let name: String
        let role: String
        let canChange: Bool
        let newPath: String
        let collections: [CollectionSummary]
        /// The team's keys, apps, members and activity pages.
        var links: [TeamTabs.Tab] = []
    }
    struct CollectionSummary: Encodable, Sendable {
        let identifier: String
        let description: String
        let models: String
        let active: String?
        let path: String
    }
    struct HomePage: Encodable, Sendable { let chrome: Chrome; let teams: [TeamSection] }
    struct NewCollectionPage: Encodable, Sendable {
        let chrome: Chrome
        let team: String
        let action: String
        let identifier: String
        let description: String
        let models: String
        let error: String?
    }

    let store: any BlobStore

    func boot(routes: any RoutesBuilder) throws {
        routes.get("dashboard", use: home)
        let team = routes.grouped("dashboard", "teams", ":team", "collections")
        team.get("new", use: newForm)
        team.on(.POST, body: .collect(maxSize: "32kb"), use: create)
        team.get(":collection", use: show)
    }

    func home(req: Request) async throws -> Response {
        let session = try req.dashboardSession()
        let memberships = try await MembershipRecord.query(on: req.db).filter(\.$user.$id == session.userID).with(\.$team).all()
            .sorted { $0.team.name < $1.team.name }
        var teams: [TeamSection] = []
        for membership in memberships {
            let collections = try await CollectionRecord.query(on: req.db).filter(\.$team.$id == membership.team.requireID())
                .sort(\.$identifier).all()
            var summaries: [CollectionSummary] = []
            for collection in collections {
                let active = try await collection.activeDeploymentID.asyncMap { try await DeploymentRecord.find($0, on: req.db) }
                summaries.append(CollectionSummary(identifier: collection.identifier, description: collection.description,
                                                   models: collection.modelNames.joined(separator: ", "), active: active??.name,
                                                   path: Self.path(team: membership.team.name, collection: collection.identifier)))
            }
            teams.append(TeamSection(name: membership.team.name, role: membership.role.rawValue,
                                     canChange: membership.role >= .developer,
                                     newPath: "/dashboard/teams/\(Self.escape(membership.team.name))/collections/new", collections: summaries,
                                     links: TeamTabs(team: membership.team.name, current: "").items))
        }
        return try await req.page("home", HomePage(chrome: try Chrome.make(req, title: "Collections"), teams: teams))
    }

    func newForm(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .developer)
        return try await req.page("collection-new", NewCollectionPage(
            chrome: try Chrome.make(req, title: "New collection"), team: team.name, action: Self.createPath(team.name),
            identifier: "", description: "", models: "", error: nil))
    }

    func create(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .developer)
        let fields = FormFields(request: req)
        let identifier = try fields.text("identifier", label: "The identifier", limit: 100)
        let description = try fields.text("description", label: "The description", limit: 1000)
        let modelText = try fields.text("models", label: "The model names", limit: 10_000)
        let models = modelText.split(whereSeparator: { $0 == "," || $0.isNewline }).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        do {
            let body = CollectionController.CreateCollection(identifier: identifier, description: description, models: models)
            let collection = try await CollectionController.create(body, in: team, actor: try req.user().name, on: req.db)
            return req.seeOther(Self.path(team: team.name, collection: collection.identifier))
        } catch let error as APIError where error.status != .forbidden {
            return try await req.page("collection-new", NewCollectionPage(
                chrome: try Chrome.make(req, title: "New collection"), team: team.name, action: Self.createPath(team.name), identifier: identifier, description: description,
                models: modelText, error: DashboardErrorMiddleware.sentence(error.reason)), status: error.status)
        }
    }

    func show(req: Request) async throws -> Response {
        let (team, collection) = try await req.collection(requiring: .viewer)
        let page = try await CollectionPage.make(req, team: team, collection: collection, store: store)
        return try await req.page("collection", page)
    }

    /// The page of a collection (path components are percent-encoded).
    static func path(team: String, collection: String) -> String {
        "/dashboard/teams/\(escape(team))/collections/\(escape(collection))"
    }

    /// Where the new-collection form posts.
    static func createPath(_ team: String) -> String { "/dashboard/teams/\(escape(team))/collections" }

    static func escape(_ component: String) -> String {
        component.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? component
    }
}

extension Optional {
    /// `map` with an asynchronous transform.
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
