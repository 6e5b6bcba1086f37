import Fluent
import Vapor

/// The pages that make deployments in a browser: new (`…/deployments/new`) and clone
/// (`…/deployments/:deployment/clone`), each a form that posts back to the same address family.
///
/// Saving runs the API's own steps (``DeploymentController`` create and clone: names, model
/// versions, key checks, blob references, audit); the form only turns its fields into a
/// ``DeploymentInput``. A refusal shows the form again with the reason and the input kept.
struct DeploymentForms: RouteCollection {
    let deployments: DeploymentController
    let maximumSize: Int64

    func boot(routes: any RoutesBuilder) throws {
        let collection = routes.grouped("dashboard", "teams", ":team", "collections", ":collection", "deployments")
        collection.get("new", use: newForm)
        collection.on(.POST, body: .collect(maxSize: "64kb"), use: create)
        collection.get(":deployment", "clone", use: cloneForm)
        collection.on(.POST, ":deployment", "clone", body: .collect(maxSize: "64kb"), use: clone)
    }

    func newForm(req: Request) async throws -> Response {
        let (team, collection) = try await req.collection(requiring: .developer)
        var input = DeploymentFormPage.Input()
        input.picks = DeploymentFormPage.picks(try req.query.decode([String: String].self))
        return try await req.page("deployment-form", try await DeploymentFormPage.make(
            req, team: team, collection: collection, source: nil, input: input, error: nil, maximumSize: maximumSize))
    }

    func cloneForm(req: Request) async throws -> Response {
        let (team, collection, source) = try await DeploymentController.deployment(req, requiring: .developer)
        var input = try await Self.cloneInput(source, collection: collection, on: req.db)
        input.picks.merge(DeploymentFormPage.picks(try req.query.decode([String: String].self))) { $1 }
        return try await req.page("deployment-form", try await DeploymentFormPage.make(
            req, team: team, collection: collection, source: source, input: input, error: nil, maximumSize: maximumSize))
    }

    /// What the clone form of `source` starts with: the name `SOURCE-copy`, its models chosen, its rules as text.
    static func cloneInput(_ source: DeploymentRecord, collection: CollectionRecord, on db: any Database) async throws -> DeploymentFormPage.Input {
        let versions = try await DeploymentView.versions(source.spec.versionIDs, on: db)
        var input = DeploymentFormPage.Input(name: source.name + "-copy", rules: RulesText.text(source.spec.rules, versions: versions))
        for (index, name) in collection.modelNames.enumerated() {
            if let id = source.spec.defaults[name], let version = versions[id] { input.picks[index] = version.blobID }
        }
        return input
    }

    func create(req: Request) async throws -> Response {
        let (team, collection) = try await req.collection(requiring: .developer)
        return try await save(req, team: team, collection: collection, source: nil)
    }

    func clone(req: Request) async throws -> Response {
        let (team, collection, source) = try await DeploymentController.deployment(req, requiring: .developer)
        return try await save(req, team: team, collection: collection, source: source)
    }

    private func save(_ req: Request, team: TeamRecord, collection: CollectionRecord, source: DeploymentRecord?) async throws -> Response {
        let fields = FormFields(request: req)
        var input = DeploymentFormPage.Input()
        input.name = try fields.text("name", label: "The name", limit: 100)
        input.rules = try fields.raw("rules", label: "The rules", limit: RulesText.maximumLength)
        for index in collection.modelNames.indices {
            let value = try fields.text("model-\(index)", label: "A model choice", limit: 64).lowercased()
            if !value.isEmpty { input.picks[index] = value }
        }
        do {
            guard !input.name.isEmpty else { throw DashboardError.invalidForm("Give the deployment a name, such as spring-2026.") }
            let versions = try await ModelVersionRecord.query(on: req.db).filter(\.$collection.$id == collection.requireID()).limit(1000).all()
            let rules = try RulesText.parse(input.rules) { name, value in try RulesText.resolve(name, value, among: versions) }
            var models: [String: String] = [:]
            for (index, sha) in input.picks {
                guard BlobAddress.isValid(sha) else { throw DashboardError.invalidForm("Choose one of the uploaded models for \(collection.modelNames[index]).") }
                models[collection.modelNames[index]] = sha
            }
            let body = DeploymentInput(name: input.name, models: models, rules: rules)
            let saved = if let source {
                try await deployments.clone(req, team: team, collection: collection, source: source, input: body)
            } else {
                try await deployments.create(req, team: team, collection: collection, input: body)
            }
            return req.seeOther(DeploymentPage.path(team: team.name, collection: collection.identifier, deployment: try saved.requireID()))
        } catch let error as APIError where error.status != .forbidden && error.status != .unauthorized {
            return try await refuse(req, team: team, collection: collection, source: source, input: input, reason: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
        } catch DashboardError.invalidForm(let reason) {
            return try await refuse(req, team: team, collection: collection, source: source, input: input, reason: reason, status: .unprocessableEntity)
        }
    }

    private func refuse(
        _ req: Request, team: TeamRecord, collection: CollectionRecord, source: DeploymentRecord?, input: DeploymentFormPage.Input,
        reason: String, status: HTTPStatus
    ) async throws -> Response {
        try await req.page("deployment-form", try await DeploymentFormPage.make(
            req, team: team, collection: collection, source: source, input: input, error: reason, maximumSize: maximumSize), status: status)
    }
}
