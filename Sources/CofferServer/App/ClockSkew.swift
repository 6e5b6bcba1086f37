import Fluent
import Foundation
import SQLKit

/// How far this process's clock is from the PostgreSQL server's.
///
/// Instances that share one PostgreSQL database judge time-limited rows that others wrote by their
/// own clocks: upload leases and collection holds (an instance whose clock runs an hour ahead takes
/// another's live upload lease for lapsed and collects the blob under it), the blob grace period,
/// token and invitation expiry, staged rollout timers. Each instance therefore compares its clock
/// with the database's — the one clock they all see — when it starts and every few minutes after:
/// past ``limit`` it does not start, and while it runs it logs a warning and exposes the difference
/// as `coffer_clock_skew_seconds`. Two instances that pass are at most twice the limit apart, far
/// inside the shortest window compared across instances (a collection hold's 10 minutes; an upload
/// lease is renewed while at least 11/12 of its hour is left). SQLite has no other instance and is
/// not measured.
enum ClockSkew {
    /// The largest difference, in seconds, a server starts with.
    static let limit: TimeInterval = 60

    /// One comparison of the clocks.
    struct Measurement: Sendable, Equatable {
        /// The database's clock minus this process's, in seconds.
        let skew: TimeInterval
        /// Half the round trip of the query: the true difference is within this of ``skew``.
        let uncertainty: TimeInterval

        /// Whether the clocks are certainly more than `limit` apart.
        func exceeds(_ limit: TimeInterval) -> Bool { abs(skew) - uncertainty > limit }

        /// "this server's clock is 125 s behind the database's".
        var description: String {
            let seconds = Int(abs(skew).rounded())
            return "this server's clock is \(seconds) s \(skew > 0 ? "behind" : "ahead of") the database's"
        }
    }

    /// Compares `clock` with the database's clock; nil on SQLite.
    ///
    /// Takes up to ``samples`` readings and keeps the one with the shortest round trip, as NTP does:
    /// the first may include opening a pooled connection (a handshake and authentication before the
    /// query), and on a loaded host any one may wait for a thread; either moves the midpoint by half
    /// the wait. Stops early once a reading is within ``closeEnough``.
    static func measure(on database: any Database, clock: @Sendable () -> Date = { Date() }) async throws -> Measurement? {
        guard let sql = database as? any SQLDatabase, sql.dialect.name == "postgresql" else { return nil }
        var best: Measurement?
        for _ in 0..<samples {
            guard let reading = try await read(sql, clock: clock) else { return nil }
            if reading.uncertainty < best?.uncertainty ?? .infinity { best = reading }
            if reading.uncertainty <= closeEnough { break }
        }
        return best
    }

    /// How many readings ``measure(on:clock:)`` takes at most.
    static let samples = 5
    /// A reading whose half round trip is within this many seconds ends the measurement.
    static let closeEnough: TimeInterval = 0.01

    /// One reading: the database's clock against the midpoint of the query's round trip.
    private static func read(_ sql: any SQLDatabase, clock: @Sendable () -> Date) async throws -> Measurement? {
        let before = clock()
        // clock_timestamp(), not now(): now() is the transaction's start, which a pooled
        // connection's implicit transaction makes the statement's start anyway, but say so.
        let row = try await sql.raw("SELECT extract(epoch FROM clock_timestamp())::float8 AS now").first()
        let after = clock()
        guard let now = try row?.decode(column: "now", as: Double.self) else { return nil }
        let middle = (before.timeIntervalSince1970 + after.timeIntervalSince1970) / 2
        return Measurement(skew: now - middle, uncertainty: max(0, after.timeIntervalSince(before)) / 2)
    }

    /// Refuses to start when the clocks are more than ``limit`` apart.
    /// - Returns: the measurement the start passed with (the first value of the gauge); nil on SQLite.
    /// - Throws: ``ServerSetupError``, one line with the difference and what to do.
    @discardableResult
    static func check(on database: any Database, clock: @Sendable () -> Date = { Date() }) async throws -> Measurement? {
        guard let measured = try await measure(on: database, clock: clock) else { return nil }
        if measured.exceeds(limit) { throw refusal(measured) }
        return measured
    }

    /// The one line a start refuses with (and `coffer-server check` reports).
    static func refusal(_ measured: Measurement) -> ServerSetupError {
        ServerSetupError(
            "\(measured.description) (at most \(Int(limit)) s allowed): instances sharing the database judge each other's leases and timers by their clocks; synchronise this host's clock (NTP) and start again")
    }
}
