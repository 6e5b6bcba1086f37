import Fluent
import Foundation

/// A user's role in a team.
final class MembershipRecord: Model, @unchecked Sendable {
    static let schema = "memberships"

    @ID(key: .id) var id: UUID?
    @Parent(key: "team_id") var team: TeamRecord
    @Parent(key: "user_id") var user: UserRecord
    @Enum(key: "role") var role: Role
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(teamID: UUID, userID: UUID, role: Role) {
        self.$team.id = teamID
        self.$user.id = userID
        self.role = role
    }
}

/// What a member may do, each role including the ones below it.
enum Role: String, Codable, Sendable, CaseIterable, Comparable {
    /// Reads everything of the team but secrets.
    case viewer
    /// Also creates apps and keys, uploads models.
    case developer
    /// Also manages members.
    case owner

    private var rank: Int {
        switch self {
        case .viewer: return 0
        case .developer: return 1
        case .owner: return 2
        }
    }

    static func < (lhs: Role, rhs: Role) -> Bool { lhs.rank < rhs.rank }
}
