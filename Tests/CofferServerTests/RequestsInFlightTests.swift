@testable import CofferServer
import Foundation
import NIOConcurrencyHelpers
import Testing
import Vapor

/// A shutdown waits for the main port's handlers still running: one that touches `req.db` after the
/// databases were shut down ends the process (Fluent force-unwraps the database).
@Suite("Handlers in flight at shutdown")
struct RequestsInFlightTests {
    @Test("the shutdown returns only once a handler that was running has ended")
    func shutdownWaitsForTheHandler() async throws {
        let app = try await Application.make(.testing)
        let inFlight = RequestsInFlight()
        let order = NIOLockedValueBox<[String]>([])
        let release = AsyncStream<Void>.makeStream()
        let entered = AsyncStream<Void>.makeStream()
        let handler = AsyncBasicResponder { _ in
            entered.continuation.yield()
            for await _ in release.stream { break }
            order.withLockedValue { $0.append("handler ended") }
            return Response(status: .ok)
        }
        let request = Request(application: app, on: app.eventLoopGroup.next())
        let handling = Task { try await inFlight.respond(to: request, chainingTo: handler) }
        for await _ in entered.stream { break }
        #expect(inFlight.count == 1)

        let shutdown = Task {
            await inFlight.shutdownAsync(app)
            order.withLockedValue { $0.append("shutdown returned") }
        }
        // The shutdown is waiting (its patience is 15 s): let the handler end now.
        try await Task.sleep(for: .milliseconds(200))
        #expect(order.withLockedValue { $0 }.isEmpty)
        release.continuation.yield()
        _ = try await handling.value
        await shutdown.value
        #expect(order.withLockedValue { $0 } == ["handler ended", "shutdown returned"])
        #expect(inFlight.count == 0)
        try await app.asyncShutdown()
    }

    @Test("a handler that throws is counted out too")
    func thrownHandlerLeaves() async throws {
        let app = try await Application.make(.testing)
        let inFlight = RequestsInFlight()
        let request = Request(application: app, on: app.eventLoopGroup.next())
        await #expect(throws: Abort.self) {
            try await inFlight.respond(to: request, chainingTo: AsyncBasicResponder { _ in throw Abort(.badRequest) })
        }
        #expect(inFlight.count == 0)
        try await app.asyncShutdown()
    }
}
