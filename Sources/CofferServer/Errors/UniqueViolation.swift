import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver

/// A write that a unique constraint refused: another request stored the same name first.
///
/// Handlers look a name up before inserting it, but two requests can both pass that check; the
/// database's unique constraint then decides, and the loser must hear 409 with a sentence, not 500.
/// Both drivers' errors are recognised: PostgreSQL's SQLSTATE 23505 (`unique_violation`) and
/// SQLite's "UNIQUE constraint failed" (primary keys included), with or without extended codes.
enum UniqueViolation {
    /// Whether `error` is a unique (or primary key) violation from either database.
    static func matches(_ error: any Error) -> Bool {
        if let error = error as? PSQLError { return error.serverInfo?[.sqlState] == "23505" }
        if let error = error as? SQLiteError {
            switch error.reason {
            case .constraintUniqueFailed, .constraintPrimaryKeyFailed: return true
            case .constraint: return error.message.hasPrefix("UNIQUE constraint failed")
            default: return false
            }
        }
        return false
    }

    /// Runs `body`; a unique violation in it becomes 409 `conflict` saying `reason` (a clause
    /// that names what exists, never a value the caller did not choose).
    static func asConflict<T>(_ reason: @autoclosure () -> String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch where matches(error) {
            throw APIError.conflict(reason())
        }
    }

    /// Runs `body` in a savepoint when `db` is inside a transaction, so that a caller may handle
    /// an error of `body` (e.g. a unique violation) and go on: on PostgreSQL an error otherwise
    /// aborts the whole transaction, and every later statement in it fails.
    static func savepoint<T: Sendable>(on db: any Database, _ body: () async throws -> T) async throws -> T {
        guard db.inTransaction, let sql = db as? any SQLDatabase else { return try await body() }
        try await sql.raw("SAVEPOINT coffer_step").run()
        do {
            let value = try await body()
            try await sql.raw("RELEASE SAVEPOINT coffer_step").run()
            return value
        } catch {
            try await sql.raw("ROLLBACK TO SAVEPOINT coffer_step").run()
            throw error
        }
    }
}
