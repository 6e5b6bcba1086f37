import Foundation
import Testing

/// The dashboard's routes in the authorization matrix: every one, for every kind of browser, from
/// one table. ``AuthorizationMatrixTests/tableCoversEveryRoute()`` fails when a registered
/// dashboard route is missing here, so a page cannot escape the roles.
extension AuthorizationMatrixTests {
    /// Who needs what on a dashboard route. `signedIn`: any member with a session.
    enum Page: Equatable { case everyone, signedIn, viewer, developer, owner }

    struct DashboardRoute {
        let method: String
        let path: String
        let access: Page
        /// The status of a request that is allowed (303 for forms that redirect after the change).
        let success: Int
        /// Status for a browser without a session when not the usual 303 to the sign-in page.
        var anonymous: Int? = nil
        /// Status for a signed-in browser when not `success`.
        var signedIn: Int? = nil
        let make: @Sendable (Setup) async throws -> (path: String, form: [String: String]?)
    }

    static let dashboardRoutes: [DashboardRoute] = [
        DashboardRoute(method: "GET", path: "/dashboard/assets/dashboard.css", access: .everyone, success: 200) { _ in ("/dashboard/assets/dashboard.css", nil) },
    ]
}
