import Fluent
import Foundation
import SQLKit

/// Holds a team for the rest of the caller's write transaction, so that checks and changes of what
/// the team has (its owners, its storage) by concurrent requests run one after the other.
/// PostgreSQL: the team's row, `FOR NO KEY UPDATE` (a new row referring to the team, which takes
/// `KEY SHARE`, still passes); SQLite: ``Database/writeTransaction(_:)`` holds the write lock already.
enum TeamLock {
    static func hold(_ teamID: UUID, on tx: any Database) async throws {
        let sql = try tx.sql()
        guard sql.dialect.name == "postgresql" else { return }
        try await sql.raw("SELECT id FROM teams WHERE id = \(bind: teamID) FOR NO KEY UPDATE").run()
    }
}
