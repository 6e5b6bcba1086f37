import NIOConcurrencyHelpers
import Vapor

/// The methods each registered path takes, so that a wrong method on a known path is answered
/// 405 `method_not_allowed` with an `Allow` header instead of Vapor's 404.
///
/// Paths are matched by the same router and rules as Vapor's own (empty segments dropped, `HEAD`
/// served by a `GET` route, the application's case sensitivity). The table is built from the
/// application's routes when the first unrouted request arrives, after every route is registered,
/// and is read-only from then on.
final class AllowedMethods: Sendable {
    private let routes: Routes
    private let table = NIOLockedValueBox<Table?>(nil)

    init(routes: Routes) {
        self.routes = routes
    }

    /// The 405 error for `request`, or nil when no route has its path (a real 404).
    func methodNotAllowed(for request: Request) -> APIError? {
        let allowed = methods(forPath: request.url.path)
        guard !allowed.isEmpty else { return nil }
        let list = allowed.joined(separator: ", ")
        return APIError(.methodNotAllowed, "method_not_allowed", "\(request.method.rawValue) is not allowed here; use \(list)",
                        headers: ["Allow": list])
    }

    /// The methods registered for `path`, sorted, with `HEAD` wherever `GET` is.
    func methods(forPath path: String) -> [String] {
        let table = self.table.withLockedValue { table in
            if let table { return table }
            let made = Table(routes)
            table = made
            return made
        }
        return table.methods(forPath: path)
    }

    /// A router per path whose outputs are unused: a path is a match for a method when the router
    /// finds a route at `[method] + path`, as in Vapor's `DefaultResponder`.
    private struct Table: @unchecked Sendable {  // the router is only read once built
        let router: TrieRouter<Bool>
        let methods: Set<String>

        init(_ routes: Routes) {
            router = TrieRouter(Bool.self, options: routes.caseInsensitive ? [.caseInsensitive] : [])
            var methods: Set<String> = []
            for route in routes.all {
                let path = route.path.filter { if case .constant("") = $0 { return false } else { return true } }
                router.register(true, at: [.constant(route.method.rawValue)] + path)
                methods.insert(route.method.rawValue)
            }
            self.methods = methods
        }

        func methods(forPath path: String) -> [String] {
            let segments = path.split(separator: "/").map(String.init)
            var found: Set<String> = []
            for method in methods {
                var parameters = Parameters()
                if router.route(path: [method] + segments, parameters: &parameters) != nil { found.insert(method) }
            }
            if found.contains("GET") { found.insert("HEAD") }
            return found.sorted()
        }
    }
}
