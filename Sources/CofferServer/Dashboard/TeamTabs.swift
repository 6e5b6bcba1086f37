import Foundation

/// The tabs above a team's administration pages (collections, keys, apps, members, activity),
/// with the current one marked for assistive technology (`aria-current`).
struct TeamTabs: Encodable, Sendable {
    struct Tab: Encodable, Sendable {
        let label: String
        let path: String
        let current: Bool
    }

    let team: String
    let items: [Tab]

    init(team: String, current: String) {
        self.team = team
        let base = Self.path(team)
        items = [("Keys", "keys"), ("Apps", "apps"), ("Members", "members"), ("Activity", "activity")].map {
            Tab(label: $0.0, path: base + "/" + $0.1, current: $0.1 == current)
        }
    }

    /// `/dashboard/teams/TEAM` with the name percent-encoded.
    static func path(_ team: String) -> String { "/dashboard/teams/\(CollectionPages.escape(team))" }

    /// A team page's address: `/dashboard/teams/TEAM/PAGE`.
    static func path(_ team: String, _ page: String) -> String { path(team) + "/" + page }
}

