import Fluent
import Vapor

/// The activity page's filters, read from its query string: what happened (a group of audit
/// actions), who did it, how it ended, between which UTC days, and the page of results.
struct ActivityFilter: Sendable {
    /// The choices of the "What" list: a value and its label.
    static let actions: [(value: String, label: String)] = [
        ("", "Everything"), ("key.deliver", "Key deliveries to devices"), ("key", "Keys created and revoked"), ("app", "Apps"),
        ("member", "Members"), ("collection", "Collections"), ("deployment", "Deployments and activations"), ("blob", "Uploads"),
    ]
    static let outcomes: [(value: String, label: String)] = [("", "Any"), ("ok", "Done"), ("delivered", "Delivered"), ("refused", "Refused")]
    static let pageSize = 50

    var action = ""
    var actor = ""
    var outcome = ""
    var from: UsageDay?
    var to: UsageDay?
    var page = 1

    init() {}

    /// Reads the query string; a value that is not one of the choices is refused in words.
    init(_ req: Request) throws {
        action = req.query[String.self, at: "action"] ?? ""
        guard Self.actions.contains(where: { $0.value == action }) else { throw DashboardError.invalidForm("Choose what to show from the list.") }
        outcome = req.query[String.self, at: "outcome"] ?? ""
        guard Self.outcomes.contains(where: { $0.value == outcome }) else { throw DashboardError.invalidForm("Choose an outcome from the list.") }
        actor = Self.normalized(actor: (req.query[String.self, at: "actor"] ?? "").trimmingCharacters(in: .whitespaces))
        guard actor.count <= 200 else { throw DashboardError.invalidForm("Who is limited to 200 characters.") }
        from = try Self.day(req.query[String.self, at: "from"], label: "From")
        to = try Self.day(req.query[String.self, at: "to"], label: "To")
        if let from, let to, from > to { throw DashboardError.invalidForm("The first day comes after the last one.") }
        page = min(max(req.query[Int.self, at: "page"] ?? 1, 1), 1000)
    }

    /// `app:ID` as the audit log writes it (the ID upper-case), whichever case was typed: the
    /// apps page shows IDs in lower case.
    static func normalized(actor: String) -> String {
        guard actor.lowercased().hasPrefix("app:"), let id = UUID(uuidString: String(actor.dropFirst(4))) else { return actor }
        return "app:\(id)"
    }

    private static func day(_ text: String?, label: String) throws -> UsageDay? {
        guard let text, !text.isEmpty else { return nil }
        guard let day = UsageDay(text) else { throw DashboardError.invalidForm("\(label) must be a day such as 2026-11-22.") }
        return day
    }

    /// Applies the filters to a team's audit query.
    func apply(to query: QueryBuilder<AuditRecord>) -> QueryBuilder<AuditRecord> {
        switch action {
        case "": break
        case "key.deliver": query.filter(\.$action == "key.deliver")
        case "key": query.filter(\.$action =~ "key.").filter(\.$action != "key.deliver")
        default: query.filter(\.$action =~ (action + "."))
        }
        if !actor.isEmpty { query.filter(\.$actor == actor) }
        if !outcome.isEmpty { query.filter(\.$outcome == outcome) }
        if let from { query.filter(\.$at >= from.start) }
        if let to { query.filter(\.$at < to.advanced(by: 1).start) }
        return query
    }

    /// The days the charts cover: the filter's days (at most the last 92 of them), else the last 30.
    func chartDays(today: UsageDay = UsageDay()) -> [UsageDay] {
        // A "from" in the future without a "to" still gives a range (never first > last).
        let last = to ?? max(today, from ?? today)
        let first = min(max(from ?? last.advanced(by: -29), last.advanced(by: -91)), last)
        return Array(first...last)
    }

    /// The query string of these filters on `page`.
    func query(page: Int) -> String {
        var items: [URLQueryItem] = []
        if !action.isEmpty { items.append(.init(name: "action", value: action)) }
        if !actor.isEmpty { items.append(.init(name: "actor", value: actor)) }
        if !outcome.isEmpty { items.append(.init(name: "outcome", value: outcome)) }
        if let from { items.append(.init(name: "from", value: from.text)) }
        if let to { items.append(.init(name: "to", value: to.text)) }
        if page > 1 { items.append(.init(name: "page", value: "\(page)")) }
        var components = URLComponents()
        components.queryItems = items
        let text = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        return text.isEmpty ? "" : "?" + text
    }

    var isFiltered: Bool { !action.isEmpty || !actor.isEmpty || !outcome.isEmpty || from != nil || to != nil }
}
