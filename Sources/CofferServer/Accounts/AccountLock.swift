import Fluent
import Foundation
import SQLKit

/// Holds accounts for the rest of the caller's write transaction, so that checks of what the teams
/// an account owns store together (``TeamQuota``), made by concurrent uploads to different teams of
/// it, run one after the other. PostgreSQL: the accounts' rows, `FOR NO KEY UPDATE`, in order of
/// their IDs (two transactions that hold some of the same accounts wait rather than deadlock);
/// SQLite: ``Database/writeTransaction(_:)`` holds the write lock already.
enum AccountLock {
    static func hold(_ userIDs: [UUID], on tx: any Database) async throws {
        let sql = try tx.sql()
        guard sql.dialect.name == "postgresql", !userIDs.isEmpty else { return }
        try await sql.raw("SELECT id FROM users WHERE id IN (\(binds: userIDs)) ORDER BY id FOR NO KEY UPDATE").run()
    }
}
