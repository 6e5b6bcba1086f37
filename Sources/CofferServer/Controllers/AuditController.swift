import Fluent
import Vapor

/// `GET /v1/teams/:team/audit[?since=ISO8601]`: the team's audit log, newest first (at most 1000).
struct AuditController: RouteCollection {
    struct EventView: Content {
        let at: Date?; let action: String; let actor: String; let target: String
        let outcome: String; let reason: String?; let deviceID: String?
        /// How many identical events the row stands for: refusals repeated within a minute are one
        /// row (``RefusalLog``).
        let count: Int64
    }

    func boot(routes: any RoutesBuilder) throws {
        routes.get("v1", "teams", ":team", "audit", use: list)
    }

    func list(req: Request) async throws -> [EventView] {
        let (team, _) = try await req.team(requiring: .viewer)
        var query = AuditRecord.query(on: req.db).filter(\.$teamID == (try team.requireID()))
        if let since: String = req.query["since"] {
            guard let date = ISO8601DateFormatter().date(from: since) else {
                throw APIError.invalid("since must be an ISO 8601 time such as 2026-11-22T08:00:00Z")
            }
            query = query.filter(\.$at >= date)
        }
        return try await query.sort(\.$at, .descending).limit(1000).all().map {
            EventView(at: $0.at, action: $0.action, actor: $0.actor, target: $0.target, outcome: $0.outcome,
                      reason: $0.reason, deviceID: $0.deviceID, count: max(1, $0.repeatCount ?? 1))
        }
    }
}
