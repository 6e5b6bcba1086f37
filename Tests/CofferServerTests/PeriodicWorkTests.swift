@testable import CofferServer
import FluentSQLiteDriver
import Foundation
import NIOConcurrencyHelpers
import Testing
import Vapor

/// The loop behind the report flush and the other periodic work: it waits its interval between
/// runs, except that a run which leaves work waiting (`again`) is followed at once, and a run that
/// failed is always followed by the interval.
@Suite("Periodic work")
struct PeriodicWorkTests {
    private struct Failed: Error {}

    /// Starts `work` on an application with an in-memory database, waits for `until` (at most
    /// `limit` seconds), stops the work and returns the seconds it ran.
    private static func running(_ work: PeriodicWork, limit: TimeInterval,
                                until done: @Sendable () -> Bool) async throws -> TimeInterval {
        let app = try await Application.make(.testing)
        app.databases.use(.sqlite(.memory), as: .sqlite)
        let start = Date()
        try work.didBoot(app)
        while !done(), Date().timeIntervalSince(start) < limit {
            try await Task.sleep(for: .milliseconds(20))
        }
        let elapsed = Date().timeIntervalSince(start)
        await work.shutdownAsync(app)
        try await app.asyncShutdown()
        return elapsed
    }

    @Test("a run that leaves work waiting is followed at once, not after the interval")
    func goesAgainWhileWorkWaits() async throws {
        let runs = NIOLockedValueBox(0)
        let work = PeriodicWork(every: 2, failure: "test", again: { runs.withLockedValue { $0 } < 4 }) { _, _ in
            runs.withLockedValue { $0 += 1 }
        }
        let elapsed = try await Self.running(work, limit: 30) { runs.withLockedValue { $0 } >= 4 }
        #expect(runs.withLockedValue { $0 } >= 4)
        // Four runs one interval apart would take 8 s; the first waits its interval, the other
        // three follow it at once.
        #expect(elapsed < 6, "four runs took \(elapsed) s")
    }

    @Test("after a run with nothing waiting, the interval passes before the next")
    func waitsWhenNothingWaits() async throws {
        let runs = NIOLockedValueBox(0)
        let work = PeriodicWork(every: 2, failure: "test", again: { false }) { _, _ in
            runs.withLockedValue { $0 += 1 }
        }
        _ = try await Self.running(work, limit: 3) { false }
        #expect(runs.withLockedValue { $0 } == 1)
    }

    @Test("a failed run is followed by the interval even when work waits (no loop against a database that is down)")
    func failureWaitsTheInterval() async throws {
        let runs = NIOLockedValueBox(0)
        let work = PeriodicWork(every: 2, failure: "test", again: { true }) { _, _ in
            runs.withLockedValue { $0 += 1 }
            throw Failed()
        }
        _ = try await Self.running(work, limit: 3) { false }
        #expect(runs.withLockedValue { $0 } == 1)
    }
}
