import Vapor

/// A collection's change forms: activate (at once or in stages) and archive a deployment, roll
/// back to the one active before, advance or halt a staged rollout. Each runs the API's own handler (same role check, same rules, same audit entry) and
/// then shows the collection again; a refusal is a page that says why.
struct DeploymentPages: RouteCollection {
    let deployments: DeploymentController

    func boot(routes: any RoutesBuilder) throws {
        let collection = routes.grouped("dashboard", "teams", ":team", "collections", ":collection")
        collection.on(.POST, "deployments", ":deployment", "activate", body: .collect(maxSize: "16kb"), use: activate)
        collection.on(.POST, "deployments", ":deployment", "archive", body: .collect(maxSize: "16kb"), use: archive)
        collection.on(.POST, "rollback", body: .collect(maxSize: "16kb"), use: rollback)
        collection.on(.POST, "deployments", ":deployment", "advance", body: .collect(maxSize: "16kb"), use: advance)
        collection.on(.POST, "deployments", ":deployment", "halt", body: .collect(maxSize: "16kb"), use: halt)
    }

    /// The activation form: at once, or in stages when its stages field is filled in.
    struct StageForm: Content {
        var stages: String?
        var stageHours: String?
        var haltAt: String?
        var minReports: String?

        /// The API's options; 400 naming a field that is not a number.
        func options() throws -> ActivationOptions {
            guard let text = stages?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return ActivationOptions() }
            let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let stages = parts.compactMap { Int($0) }
            guard parts.count <= 20, stages.count == parts.count else {
                throw APIError.invalid("stages: percentages separated by commas, e.g. 1,10,50,100")
            }
            func number(_ field: String?, _ name: String) throws -> Double? {
                guard let field = field?.trimmingCharacters(in: .whitespaces), !field.isEmpty else { return nil }
                guard field.utf8.count <= 20, let value = Double(field), value.isFinite else { throw APIError.invalid("\(name) must be a number") }
                return value
            }
            let reports = try number(minReports, "minimum reports")
            guard reports.map({ $0 == $0.rounded() && abs($0) <= 1e9 }) ?? true else { throw APIError.invalid("minimum reports must be a whole number") }
            return ActivationOptions(stages: stages, stageHours: try number(stageHours, "hours per stage"), haltAt: try number(haltAt, "halt at"),
                                     minReports: reports.map { Int($0) })
        }
    }

    func activate(req: Request) async throws -> Response {
        let form = try req.content.decode(StageForm.self)
        let options = try form.options()
        _ = try await deployments.activate(req, options: options)
        return options.stages == nil ? try back(req) : try page(req)
    }

    func advance(req: Request) async throws -> Response {
        _ = try await deployments.advance(req: req)
        return try page(req)
    }

    func halt(req: Request) async throws -> Response {
        _ = try await deployments.halt(req: req)
        return try page(req)
    }

    /// The deployment's own page, after a change to its rollout.
    private func page(_ req: Request) throws -> Response {
        guard let id = req.parameters.get("deployment", as: UUID.self) else { return try back(req) }
        return req.seeOther(DeploymentPage.path(team: try req.parameters.require("team"), collection: try req.parameters.require("collection"), deployment: id))
    }

    func archive(req: Request) async throws -> Response {
        _ = try await deployments.archive(req: req)
        return try back(req)
    }

    func rollback(req: Request) async throws -> Response {
        _ = try await deployments.rollback(req: req)
        return try back(req)
    }

    private func back(_ req: Request) throws -> Response {
        req.seeOther(CollectionPages.path(team: try req.parameters.require("team"), collection: try req.parameters.require("collection")))
    }
}
