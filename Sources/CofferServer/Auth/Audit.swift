import Fluent
import Vapor

/// Writes audit events: who, what, when, outcome. Callers never pass secrets.
enum Audit {
    static func record(
        on database: any Database, teamID: UUID?, action: String, actor: String, target: String,
        outcome: String, reason: String? = nil, deviceID: String? = nil
    ) async throws {
        try await AuditRecord(teamID: teamID, action: action, actor: actor, target: target,
                              outcome: outcome, reason: reason, deviceID: deviceID).create(on: database)
    }
}
