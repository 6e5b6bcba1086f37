import Fluent
import Foundation
import SQLKit
import Testing

@testable import CofferServer

/// The refusal audit's budgets (``RefusalLog``): kinds of refusal are many and cheap to make, rows
/// are not; one team's refusals, or a flood of refusals of no team, must not crowd another team's
/// refusals out of that team's audit log.
@Suite("Refusal audit budgets")
struct RefusalLogTests {
    static func refusal(team: UUID?, key: String) -> RefusalLog.Refusal {
        .init(teamID: team, action: "key.delivery", actor: "app:x", target: "k", reason: key.components(separatedBy: "|")[0],
              deviceID: nil, key: key)
    }

    @Test("a flood of kinds without a team, or of another team's, leaves a team's own refusal its row; past its budget a team gets its own suppressed row")
    func teamsKeepTheirRows() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let db = server.app.db
        let log = RefusalLog(maximumRowsPerMinute: 50, maximumRowsPerTeamPerMinute: 5)
        let now = Date()
        let flooder = UUID(), victim = UUID()
        // Made-up credentials from 100 addresses, and one team's 100 kinds of its own.
        for index in 0..<100 {
            try await log.record(Self.refusal(team: nil, key: "invalid_credential|10.0.0.\(index)"), on: db, now: now)
            try await log.record(Self.refusal(team: flooder, key: "collection_not_bound|app\(index)"), on: db, now: now)
        }
        try await log.record(Self.refusal(team: victim, key: "other_team|app|k"), on: db, now: now)
        try await log.flush(on: db)

        let rows = try await AuditRecord.query(on: db).filter(\.$outcome == "refused").all()
        let victims = rows.filter { $0.teamID == victim }
        #expect(victims.map(\.reason) == ["other_team"], "the victim team's refusal has its own row: \(victims.map(\.reason))")
        for team in [nil, flooder] as [UUID?] {
            let own = rows.filter { $0.teamID == team }
            #expect(own.count == 5, "a team's rows a minute, its suppressed row included: \(own.count)")
            let suppressed = try #require(own.first { $0.action == "audit.suppressed" })
            #expect(suppressed.repeatCount == 96, "the 96 kinds past the first 4 are counted in the team's suppressed row")
        }
        #expect(!rows.contains { $0.action == "audit.suppressed" && $0.target.contains("50 kinds") }, "the budget of all was not reached")
    }
}

extension RefusalLogTests {
    @Test("past the budget of all teams, a team's refusal still reaches its own suppressed row, not one of no team")
    func serverBudgetLeavesEachTeamItsSuppressedRow() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let db = server.app.db
        let log = RefusalLog(maximumRowsPerMinute: 12, maximumRowsPerTeamPerMinute: 5)
        let now = Date()
        // Made-up credentials for the app IDs of three teams: 4 refusal rows each spend the 12 of all.
        let flooded = [UUID(), UUID(), UUID()]
        for team in flooded {
            for index in 0..<10 { try await log.record(Self.refusal(team: team, key: "invalid_credential|\(team)-app\(index)"), on: db, now: now) }
        }
        let victim = UUID()
        try await log.record(Self.refusal(team: victim, key: "other_team|app|k"), on: db, now: now)
        try await log.record(Self.refusal(team: victim, key: "collection_not_bound|app|c"), on: db, now: now)
        try await log.flush(on: db)

        let rows = try await AuditRecord.query(on: db).filter(\.$outcome == "refused").all()
        #expect(rows.filter { $0.action != "audit.suppressed" }.count == 12, "refusal rows stop at the budget of all")
        let victims = rows.filter { $0.teamID == victim }
        #expect(victims.count == 1, "the victim team has one row: \(victims.map(\.action))")
        let suppressed = try #require(victims.first)
        #expect(suppressed.action == "audit.suppressed" && suppressed.target.contains("all teams together"),
                "the victim's row says the server's budget ran out: \(suppressed.target)")
        #expect(suppressed.repeatCount == 2, "both of the victim's refusals are counted: \(String(describing: suppressed.repeatCount))")
        #expect(!rows.contains { $0.action == "audit.suppressed" && $0.teamID == nil }, "no refusal went to a row of no team")
        for team in flooded {
            #expect(rows.filter { $0.teamID == team }.count == 5, "each flooded team: 4 refusal rows and its own suppressed row")
        }
    }
}

extension RefusalLogTests {
    @Test("a flush that fails part-way keeps every count it did not write for the next flush, and writes none twice")
    func failedFlushKeepsCounts() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let db = server.app.db
        let sql = try #require(db as? any SQLDatabase)
        let log = RefusalLog()
        let now = Date()
        // Three kinds: a row each, and 1, 2 and 3 repeats counted in memory.
        for (index, reason) in ["kept_a", "refused_b", "refused_c"].enumerated() {
            for _ in 0...(index + 1) { try await log.record(Self.refusal(team: nil, key: reason + "|app"), on: db, now: now) }
        }
        // Two of the three rows refuse their update: in whatever order the flush takes them, it
        // fails at one with the other not yet written.
        try await sql.raw("""
            CREATE TRIGGER refuse_repeats BEFORE UPDATE ON audit_events WHEN OLD.reason IN ('refused_b', 'refused_c')
            BEGIN SELECT RAISE(ABORT, 'refused'); END
            """).run()
        await #expect(throws: (any Error).self) { try await log.flush(on: db) }
        try await sql.raw("DROP TRIGGER refuse_repeats").run()
        try await log.flush(on: db)

        let rows = try await AuditRecord.query(on: db).filter(\.$outcome == "refused").all()
        let counts = Dictionary(rows.map { ($0.reason ?? "", $0.repeatCount ?? 1) }, uniquingKeysWith: +)
        #expect(counts == ["kept_a": 2, "refused_b": 3, "refused_c": 4], "\(counts)")
    }
}
