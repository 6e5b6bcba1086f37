import Foundation
import GRDB

extension SealedFieldsStore {
    /// Walks the rows of `table` matching `condition` in rowid order, `batchSize` rows per write
    /// transaction, letting `rewrite` change column values, and reports after each batch.
    func walk(
        _ table: SealedTable, where condition: String, batchSize: Int,
        progress: (SealedFieldsProgress) -> Bool,
        rewrite: @escaping (Row, inout [String: DatabaseValue]) throws -> Void
    ) throws -> SealedFieldsProgress {
        precondition(batchSize > 0, "batchSize must be positive")
        let name = table.name.quotedDatabaseIdentifier
        let total = try writer.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(name) WHERE \(condition)") ?? 0
        }
        var report = SealedFieldsProgress(table: table.name, rowsDone: 0, rowsTotal: total, isFinished: total == 0)
        var lastRowID = Int64.min
        while !report.isFinished {
            let (count, last) = try writer.write { db -> (Int, Int64) in
                let rows = try Row.fetchAll(db, sql: """
                    SELECT rowid AS sealedfields_rowid, * FROM \(name)
                    WHERE rowid > ? AND (\(condition)) ORDER BY rowid LIMIT ?
                    """, arguments: [lastRowID, batchSize])
                for row in rows {
                    var values: [String: DatabaseValue] = [:]
                    try rewrite(row, &values)
                    guard !values.isEmpty else { continue }
                    let columns = values.keys.sorted()
                    try db.execute(
                        sql: "UPDATE \(name) SET \(columns.map { "\($0.quotedDatabaseIdentifier) = ?" }.joined(separator: ", ")) WHERE rowid = ?",
                        arguments: StatementArguments(columns.map { values[$0]! } + [(row["sealedfields_rowid"] as Int64).databaseValue]))
                }
                return (rows.count, rows.last?["sealedfields_rowid"] ?? lastRowID)
            }
            lastRowID = last
            report.rowsDone += count
            if count < batchSize { report.isFinished = true }
            if !progress(report) || Task.isCancelled { break }
        }
        return report
    }
}
