import Vapor

/// `/dashboard/new-team`: any signed-in member creates a team and becomes its owner, through the
/// API's own code (``TeamController/create(name:owner:on:)``), as `coffer team create` does.
struct TeamPages: RouteCollection {
    struct NewTeamPage: Encodable, Sendable {
        let chrome: Chrome
        let name: String
        let error: String?
    }

    func boot(routes: any RoutesBuilder) throws {
        routes.get("dashboard", "new-team", use: form)  // not teams/new: a team may be called "new"
        routes.on(.POST, "dashboard", "new-team", body: .collect(maxSize: "16kb"), use: create)
    }

    func form(req: Request) async throws -> Response {
        _ = try req.user()
        return try await req.page("team-new", NewTeamPage(chrome: try Chrome.make(req, title: "New team"), name: "", error: nil))
    }

    func create(req: Request) async throws -> Response {
        let user = try req.user()
        let name = try FormFields(request: req).text("name", label: "The team name", limit: 100)
        do {
            _ = try await TeamController.create(name: name, owner: user, on: req.db)
            return req.seeOther("/dashboard")
        } catch let error as APIError {
            return try await req.page("team-new", NewTeamPage(chrome: try Chrome.make(req, title: "New team"), name: name,
                                                              error: DashboardErrorMiddleware.sentence(error.reason)), status: error.status)
        }
    }
}
