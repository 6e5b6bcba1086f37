@testable import CofferServer
import FluentSQLiteDriver
import Foundation
import NIOConcurrencyHelpers
import Testing
import Vapor

/// The loop behind the report flush and the other periodic work: it waits its interval between
/// runs, except that a run which leaves work waiting (`again`) is followed after a short pause, and
/// a run that failed is always followed by the interval.
@Suite("Periodic work")
struct PeriodicWorkTests {
    private struct Failed: Error {}

    /// Starts `work` on an application with an in-memory database, waits for `until` (at most
    /// `limit` seconds) and then `settle` seconds more, stops the work and returns the seconds
    /// until `until` held (or `limit` passed).
    private static func running(_ work: PeriodicWork, limit: TimeInterval, settle: TimeInterval = 0,
                                until done: @Sendable () -> Bool) async throws -> TimeInterval {
        let app = try await Application.make(.testing)
        app.databases.use(.sqlite(.memory), as: .sqlite)
        let start = Date()
        try work.didBoot(app)
        while !done(), Date().timeIntervalSince(start) < limit {
            try await Task.sleep(for: .milliseconds(20))
        }
        let elapsed = Date().timeIntervalSince(start)
        if settle > 0 { try await Task.sleep(for: .seconds(settle)) }
        await work.shutdownAsync(app)
        try await app.asyncShutdown()
        return elapsed
    }

    // Every test waits an hour between runs and starts the first at once: a run that should not
    // follow at once would need that hour, so no assertion depends on how fast a loaded machine is.

    @Test("a run that leaves work waiting is followed after a short pause, not after the interval")
    func goesAgainWhileWorkWaits() async throws {
        let runs = NIOLockedValueBox<[(start: ContinuousClock.Instant, end: ContinuousClock.Instant)]>([])
        let work = PeriodicWork(every: 3600, firstRunAfter: 0, failure: "test", again: { runs.withLockedValue { $0.count } < 4 }) { _, _ in
            let start = ContinuousClock.now
            try await Task.sleep(for: .milliseconds(10))
            runs.withLockedValue { $0.append((start, ContinuousClock.now)) }
        }
        // Four runs, then half a second in which a fifth (again is false now) would show.
        _ = try await Self.running(work, limit: 300, settle: 0.5) { runs.withLockedValue { $0.count } >= 4 }
        let times = runs.withLockedValue { $0 }
        #expect(times.count == 4)
        // The pause is there (a SQLite writer waiting behind the runs gets the lock in it).
        for index in times.indices.dropFirst() {
            let gap = times[index].start - times[index - 1].end
            #expect(gap >= .milliseconds(Int(PeriodicWork.followUpPause * 1000) - 10), "run \(index) followed after \(gap)")
        }
    }

    @Test("a pause given for the runs `again` asks for is the one taken, not the default")
    func givenPause() async throws {
        let runs = NIOLockedValueBox(0)
        // Half the interval: with the default pause (0.15 s) a second run would come within the second.
        let work = PeriodicWork(every: 3600, firstRunAfter: 0, failure: "test", again: { true }, pauseBeforeAgain: 1800) { _, _ in
            runs.withLockedValue { $0 += 1 }
        }
        _ = try await Self.running(work, limit: 300, settle: 1) { runs.withLockedValue { $0 } >= 1 }
        #expect(runs.withLockedValue { $0 } == 1)
        #expect(PeriodicWork(every: 1, failure: "test") { _, _ in }.pauseBeforeAgain == PeriodicWork.followUpPause)
    }

    @Test("the report flush pauses before a follow-up on SQLite, and not at all on PostgreSQL")
    func reportFlushPause() {
        var configuration = ServerConfiguration(dataDirectory: "/nonexistent", hostname: "127.0.0.1", port: 0)
        #expect(configuration.reportFlushFollowUpPause == PeriodicWork.followUpPause)
        configuration.databaseURL = "postgres://coffer@127.0.0.1:5432/coffer"
        #expect(configuration.reportFlushFollowUpPause == 0)
    }

    @Test("after a run with nothing waiting, the interval passes before the next")
    func waitsWhenNothingWaits() async throws {
        let runs = NIOLockedValueBox(0)
        let work = PeriodicWork(every: 3600, firstRunAfter: 0, failure: "test", again: { false }) { _, _ in
            runs.withLockedValue { $0 += 1 }
        }
        _ = try await Self.running(work, limit: 300, settle: 1) { runs.withLockedValue { $0 } >= 1 }
        #expect(runs.withLockedValue { $0 } == 1)
    }

    @Test("work without `again` waits the interval after every run")
    func noAgainWaits() async throws {
        let runs = NIOLockedValueBox(0)
        let work = PeriodicWork(every: 3600, firstRunAfter: 0, failure: "test") { _, _ in runs.withLockedValue { $0 += 1 } }
        _ = try await Self.running(work, limit: 300, settle: 1) { runs.withLockedValue { $0 } >= 1 }
        #expect(runs.withLockedValue { $0 } == 1)
    }

    @Test("a failed run is followed by the interval even when work waits (no loop against a database that is down)")
    func failureWaitsTheInterval() async throws {
        let runs = NIOLockedValueBox(0)
        let work = PeriodicWork(every: 3600, firstRunAfter: 0, failure: "test", again: { true }) { _, _ in
            runs.withLockedValue { $0 += 1 }
            throw Failed()
        }
        _ = try await Self.running(work, limit: 300, settle: 1) { runs.withLockedValue { $0 } >= 1 }
        #expect(runs.withLockedValue { $0 } == 1)
    }

    @Test("a failure after a run that left work waiting is followed by the interval, not the pause")
    func failureAfterBacklogWaitsTheInterval() async throws {
        let runs = NIOLockedValueBox(0)
        let work = PeriodicWork(every: 3600, firstRunAfter: 0, failure: "test", again: { true }) { _, _ in
            // The first run succeeds with work waiting; the second fails.
            let run = runs.withLockedValue { $0 += 1; return $0 }
            if run >= 2 { throw Failed() }
        }
        _ = try await Self.running(work, limit: 300, settle: 1) { runs.withLockedValue { $0 } >= 2 }
        #expect(runs.withLockedValue { $0 } == 2)
    }
}
