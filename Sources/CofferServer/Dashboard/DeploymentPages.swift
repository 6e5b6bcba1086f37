import Vapor

/// A collection's change forms: activate and archive a deployment, roll back to the one active
/// before. Each runs the API's own handler (same role check, same rules, same audit entry) and
/// then shows the collection again; a refusal is a page that says why.
struct DeploymentPages: RouteCollection {
    let deployments: DeploymentController

    func boot(routes: any RoutesBuilder) throws {
        let collection = routes.grouped("dashboard", "teams", ":team", "collections", ":collection")
        collection.on(.POST, "deployments", ":deployment", "activate", body: .collect(maxSize: "16kb"), use: activate)
        collection.on(.POST, "deployments", ":deployment", "archive", body: .collect(maxSize: "16kb"), use: archive)
        collection.on(.POST, "rollback", body: .collect(maxSize: "16kb"), use: rollback)
    }

    func activate(req: Request) async throws -> Response {
        _ = try await deployments.activate(req: req)
        return try back(req)
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
