import Fluent
import Foundation
import SQLKit

extension UsageCounter {
    /// Adds the pending counts to `usage_daily`: `INSERT … ON CONFLICT (day, kind, subject)
    /// DO UPDATE SET count = count + excluded.count` (SQLite and PostgreSQL), so several instances
    /// add to the same rows. On failure the counts not written are kept for the next flush.
    func flush(on database: any Database) async throws {
        let counts = take()
        guard !counts.isEmpty else { return }
        guard let sql = database as? any SQLDatabase else { restore(counts); return }
        // Bounded statements: a day with very many blobs is written in pieces. In one order on
        // every instance (not each process's Dictionary order), so that two instances adding to
        // the same rows at once lock them in the same order and do not deadlock each other.
        let rows = counts.sorted { ($0.key.day.text, $0.key.kind.rawValue, $0.key.subject) < ($1.key.day.text, $1.key.kind.rawValue, $1.key.subject) }
        for start in stride(from: 0, to: rows.count, by: 500) {
            do {
                let insert = sql.insert(into: UsageDailyRecord.schema)
                    .columns("id", "day", "kind", "subject", "count")
                for (key, value) in rows[start..<min(start + 500, rows.count)] {
                    insert.values(SQLBind(UUID()), SQLBind(key.day.text), SQLBind(key.kind.rawValue), SQLBind(key.subject), SQLBind(value))
                }
                try await insert.onConflict(with: ["day", "kind", "subject"]) {
                    $0.set("count", to: SQLBinaryExpression(SQLColumn("count", table: UsageDailyRecord.schema), .add, SQLExcludedColumn("count")))
                }.run()
            } catch {
                // Each statement commits on its own: the pieces before this one are stored, and
                // putting their counts back would add them twice. This piece and the rest are kept
                // (all of them inside a caller's transaction, which rolls back whole).
                let unwritten: [Key: Int64] = Dictionary(uniqueKeysWithValues: rows[start...].map { ($0.key, $0.value) })
                restore(database.inTransaction ? counts : unwritten)
                throw error
            }
        }
    }
}
