import Fluent
import Vapor

/// `/healthz`, `/metrics` and `/openapi.json`: for load balancers, Prometheus and API clients;
/// and `/`, which sends a browser to the dashboard.
struct SystemController: RouteCollection {
    let metrics: ServerMetrics

    func boot(routes: any RoutesBuilder) throws {
        routes.get { req in req.redirect(to: "/dashboard/", redirectType: .normal) }  // 303 See Other
        routes.get("healthz", use: health)
        routes.get("metrics", use: prometheus)
        routes.get("openapi.json", use: openAPI)
    }

    func health(req: Request) async throws -> Response {
        _ = try await UserRecord.query(on: req.db).count()
        return Response(status: .ok, body: .init(string: "{\"status\":\"ok\"}"))
    }

    func prometheus(req: Request) async throws -> Response {
        let response = Response(status: .ok, body: .init(string: metrics.render()))
        response.headers.replaceOrAdd(name: .contentType, value: "text/plain; version=0.0.4")
        return response
    }

    func openAPI(req: Request) async throws -> Response {
        let response = Response(status: .ok, body: .init(string: OpenAPIDocument.json))
        response.headers.contentType = .json
        return response
    }
}
