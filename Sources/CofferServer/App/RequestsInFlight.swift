import NIOConcurrencyHelpers
import Vapor

/// The main port's requests whose handlers are still running, waited for before the application
/// shuts its databases, store client and hashing pool.
///
/// A handler may still be running when the server has stopped: an upload whose client was still
/// sending when the listener's shutdown timeout (10 s) closed its connection goes on in its error
/// path, and that path deletes its upload lease. Fluent's `req.db` traps once the application's
/// databases are shut down ("unexpectedly found nil"), so such a handler would end the process in
/// a crash during a clean stop. The application's shutdown therefore waits for the handlers first
/// (at most ``patience``): this is the lifecycle handler registered last, so it shuts down first.
final class RequestsInFlight: AsyncMiddleware, LifecycleHandler {
    /// The longest a shutdown waits for handlers to end; past it, it goes on.
    static let patience: TimeInterval = 15

    private let running = NIOLockedValueBox(0)

    /// The number of handlers running now.
    var count: Int { running.withLockedValue { $0 } }

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        running.withLockedValue { $0 += 1 }
        defer { running.withLockedValue { $0 -= 1 } }
        return try await next.respond(to: request)
    }

    func shutdownAsync(_ application: Application) async {
        let deadline = Date().addingTimeInterval(Self.patience)
        while count > 0, Date() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if count > 0 {
            application.logger.warning("shutting down with \(count) requests still being handled after \(Int(Self.patience)) s")
        }
    }
}
