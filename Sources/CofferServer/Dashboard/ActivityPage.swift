import Fluent
import Vapor

/// `/dashboard/teams/TEAM/activity`: the team's audit log, newest first, filterable
/// (``ActivityFilter``) and paginated, under two charts (``UsageCharts``). Viewers and up.
///
/// The page first adds this instance's pending usage counts to the database, so what it shows
/// includes the downloads this server just served; other instances' counts arrive within their
/// flush interval.
struct ActivityPage: RouteCollection {
    struct Event: Encodable, Sendable {
        let at: String
        let action: String
        let actor: String
        /// The log filtered to this actor.
        let actorLink: String
        let target: String
        let outcome: String
        let refused: Bool
        let reason: String
        let device: String
    }
    struct Choice: Encodable, Sendable {
        let value: String
        let label: String
        let selected: Bool
    }
    struct Page: Encodable, Sendable {
        let chrome: Chrome
        let tabs: TeamTabs
        let team: String
        let action: String
        let actions: [Choice]
        let outcomes: [Choice]
        let actor: String
        let from: String
        let to: String
        let filtered: Bool
        let charts: [BarChart]
        let events: [Event]
        let page: Int
        let newer: String?
        let older: String?
    }

    let usage: UsageCounter

    func boot(routes: any RoutesBuilder) throws {
        routes.get("dashboard", "teams", ":team", "activity", use: show)
    }

    func show(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .viewer)
        let filter = try ActivityFilter(req)
        do { try await usage.flush(on: req.db) } catch {
            req.logger.warning("usage counts not flushed for the activity page", metadata: ["type": "\(type(of: error))"])
        }
        let charts = try await UsageCharts.make(team: team, days: filter.chartDays(), on: req.db)

        let offset = (filter.page - 1) * ActivityFilter.pageSize
        let rows = try await filter.apply(to: AuditRecord.query(on: req.db).filter(\.$teamID == (try team.requireID())))
            .sort(\.$at, .descending).range(offset..<(offset + ActivityFilter.pageSize + 1)).all()
        let names = try await Self.names(team, on: req.db)
        let base = TeamTabs.path(team.name, "activity")
        let events = rows.prefix(ActivityFilter.pageSize).map { row in
            var byActor = filter
            byActor.actor = row.actor
            return Event(at: CollectionPage.date(row.at), action: row.action, actor: names[row.actor] ?? row.actor,
                  actorLink: base + byActor.query(page: 1), target: names[row.target] ?? row.target,
                  outcome: row.outcome, refused: row.outcome == "refused", reason: row.reason ?? "", device: row.deviceID ?? "")
        }
        return try await req.page("activity", Page(
            chrome: try Chrome.make(req, title: "Activity · \(team.name)", section: "team"), tabs: TeamTabs(team: team.name, current: "activity"),
            team: team.name, action: base,
            actions: ActivityFilter.actions.map { Choice(value: $0.value, label: $0.label, selected: $0.value == filter.action) },
            outcomes: ActivityFilter.outcomes.map { Choice(value: $0.value, label: $0.label, selected: $0.value == filter.outcome) },
            actor: filter.actor, from: filter.from?.text ?? "", to: filter.to?.text ?? "", filtered: filter.isFiltered,
            charts: charts, events: events, page: filter.page,
            newer: filter.page > 1 ? base + filter.query(page: filter.page - 1) : nil,
            older: rows.count > ActivityFilter.pageSize ? base + filter.query(page: filter.page + 1) : nil))
    }

    /// Readable names for the IDs the audit log holds: `app:ID` and app IDs become the app's
    /// name, key IDs the key's name (only the team's own apps and keys).
    static func names(_ team: TeamRecord, on db: any Database) async throws -> [String: String] {
        var names: [String: String] = [:]
        for app in try await AppRecord.query(on: db).filter(\.$team.$id == team.requireID()).all() {
            guard let id = app.id else { continue }
            names["app:\(id)"] = "app \(app.name)"
            names["\(id)"] = "app \(app.name)"
        }
        for key in try await KeyRecord.query(on: db).filter(\.$team.$id == team.requireID()).all() {
            guard let id = key.id else { continue }
            names[id] = "key \(key.name) (\(id.prefix(8))…)"
        }
        return names
    }
}
