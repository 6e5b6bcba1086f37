import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver

extension Database {
    /// A transaction that reads before it writes, safe to run concurrently with others.
    ///
    /// SQLite's transactions begin by reading; two that both read and then both write deadlock,
    /// and SQLite answers the second writer `SQLITE_BUSY` ("database is locked") at once, without
    /// waiting. So on SQLite the transaction takes the write lock first (as `BEGIN IMMEDIATE`
    /// would), and concurrent ones wait for it. PostgreSQL detects a deadlock between row locks and
    /// aborts one transaction with SQLSTATE 40P01. A transaction given up either way was rolled
    /// back whole and is run again (up to five times in all, after a short random pause); the next
    /// run sees what the other one committed (an account, a model version) and goes on from there.
    func writeTransaction<T: Sendable>(_ closure: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await transaction { db in
                    if let sql = db as? any SQLDatabase, sql.dialect.name == "sqlite" {
                        // sqlite-nio's busy handler retries at once, for ever: a writer waiting for
                        // the lock spins on a thread-pool thread, and under load the spinners keep
                        // the holder from the CPU it needs to commit (the starvation test timed
                        // out). SQLite's own handler, set by busy_timeout (it replaces the other on
                        // this connection), sleeps between tries and gives up after 10 s with
                        // SQLITE_BUSY, which the retry below handles.
                        try await sql.raw("PRAGMA busy_timeout = 10000").run()
                        // A write that changes nothing takes SQLite's write lock for the transaction.
                        try await sql.raw("UPDATE audit_events SET id = id WHERE 0").run()
                    }
                    return try await closure(db)
                }
            } catch where attempt < 5 && !inTransaction && Self.isTransient(error) {
                try await Task.sleep(for: .milliseconds(Int.random(in: 10...50) * attempt))
                attempt += 1
            }
        }
    }

    /// SQLite's "database is locked" and PostgreSQL's "deadlock detected".
    static func isTransient(_ error: any Error) -> Bool {
        if let error = error as? SQLiteError { return error.reason == .busy }
        if let error = error as? PSQLError { return error.serverInfo?[.sqlState] == "40P01" }
        return false
    }
}
