import AsyncKit
@testable import CofferServer
import Testing
import Vapor

/// A request that waited out the database pool's timeout is the server's overload, not an error of
/// the request or a bug: 503 `busy` with `Retry-After` on the API (and so on the device port, which
/// answers through the same mapping), 503 with `Retry-After` on the dashboard; never 500 `internal`.
@Suite("Database pool timeouts")
struct DatabaseBusyTests {
    @Test("a pool timeout is 503 busy with Retry-After on the API, 503 on the dashboard; other errors keep their answers")
    func poolTimeoutIsBusy() throws {
        let logger = Logger(label: "test")
        let (status, body, headers) = APIErrorMiddleware.describe(ConnectionPoolTimeoutError.connectionRequestTimeout, logger: logger)
        #expect(status == .serviceUnavailable)
        #expect(body.error == "busy" && body.reason == "the server is busy; retry shortly")
        #expect(headers.first(name: "Retry-After") == "2")

        let (pageStatus, heading, _) = DashboardErrorMiddleware.describe(ConnectionPoolTimeoutError.connectionRequestTimeout, logger: logger)
        #expect(pageStatus == .serviceUnavailable && heading == "The server is busy")
        // The page says when to try again, as the API's answer does.
        let page = Response(status: pageStatus)
        DashboardErrorMiddleware.addRetryAfter(for: ConnectionPoolTimeoutError.connectionRequestTimeout, to: page)
        #expect(page.headers.first(name: "Retry-After") == "2")
        let refused = Response(status: .badRequest)
        DashboardErrorMiddleware.addRetryAfter(for: APIError.invalid("a field"), to: refused)
        #expect(refused.headers.first(name: "Retry-After") == nil)

        // The pool shutting down (the server stopping) is not overload.
        #expect(APIErrorMiddleware.describe(ConnectionPoolError.shutdown, logger: logger).0 == .internalServerError)
        #expect(!DatabaseBusy.matches(ConnectionPoolError.shutdown))
    }
}
