import Vapor

/// The browser dashboard under `/dashboard`: server-rendered pages (Leaf) for the same teams,
/// collections and deployments as the API, with the API's roles.
///
/// Its stylesheet is public (the sign-in page uses it).
enum Dashboard {
    /// The path prefix of every dashboard route (the OpenAPI document describes the JSON API only).
    static let prefix = "dashboard"

    /// Sets up Leaf and registers the dashboard's routes.
    static func register(_ app: Application) throws {
        DashboardResources.configureLeaf(app)

        let stylesheet = try DashboardResources.stylesheet()
        app.get("dashboard", "assets", "dashboard.css") { _ -> Response in
            var headers = HTTPHeaders()
            headers.contentType = HTTPMediaType(type: "text", subType: "css", parameters: ["charset": "utf-8"])
            headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=300")
            headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
            return Response(status: .ok, headers: headers, body: .init(buffer: stylesheet))
        }
    }
}
