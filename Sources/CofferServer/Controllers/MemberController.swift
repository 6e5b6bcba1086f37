import Fluent
import Vapor

/// `/v1/teams/:team/members`: who is in a team, with which role.
///
/// Adding a name that has no account yet creates it and returns its first API token, once.
struct MemberController: RouteCollection {
    struct AddMember: Content { let name: String; let role: Role }
    struct MemberView: Content { let name: String; let role: Role; let token: String? }

    func boot(routes: any RoutesBuilder) throws {
        let members = routes.grouped("v1", "teams", ":team", "members")
        members.get(use: list)
        members.post(use: add)
        members.delete(":member", use: remove)
    }

    func list(req: Request) async throws -> [MemberView] {
        let (team, _) = try await req.team(requiring: .viewer)
        return try await MembershipRecord.query(on: req.db).filter(\.$team.$id == team.requireID()).with(\.$user).all()
            .map { MemberView(name: $0.user.name, role: $0.role, token: nil) }
            .sorted { $0.name < $1.name }
    }

    func add(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .owner)
        let body = try req.content.decode(AddMember.self)
        return try await Self.add(body, to: team, actor: try req.user().name, on: req.db).encodeResponse(status: .created, for: req)
    }

    /// Adds a member to `team`, or changes an existing member's role (never demoting the last
    /// owner). A name without an account gets one, and its first API token is in the answer, once.
    static func add(_ body: AddMember, to team: TeamRecord, actor: String, on database: any Database) async throws -> MemberView {
        try Names.validate(body.name, what: "member name")
        let teamID = try team.requireID()
        // Two requests adding the same name at once both find no account (or no membership); the
        // unique constraints let one through, and the other is asked to look again.
        return try await UniqueViolation.asConflict("\(body.name) was being added by another request at the same time; list the members and retry if needed") {
            try await database.writeTransaction { db in
                var firstToken: String?
                let user: UserRecord
                if let existing = try await UserRecord.query(on: db).filter(\.$name == body.name).first() {
                    user = existing
                } else {
                    user = UserRecord(name: body.name)
                    try await user.create(on: db)
                    firstToken = try await TokenController.issue(for: user.requireID(), name: "first token", on: db).1
                }
                if let membership = try await MembershipRecord.query(on: db)
                    .filter(\.$team.$id == teamID).filter(\.$user.$id == user.requireID()).first() {
                    if membership.role == .owner && body.role != .owner {
                        let owners = try await MembershipRecord.query(on: db).filter(\.$team.$id == teamID).filter(\.$role == .owner).count()
                        guard owners > 1 else { throw APIError.conflict("the last owner of a team cannot be demoted") }
                    }
                    membership.role = body.role
                    try await membership.update(on: db)
                } else {
                    try await MembershipRecord(teamID: teamID, userID: user.requireID(), role: body.role).create(on: db)
                }
                try await Audit.record(on: db, teamID: teamID, action: "member.add", actor: actor,
                                       target: "\(body.name) as \(body.role.rawValue)", outcome: "ok")
                return MemberView(name: user.name, role: body.role, token: firstToken)
            }
        }
    }

    func remove(req: Request) async throws -> HTTPStatus {
        let (team, _) = try await req.team(requiring: .owner)
        let actor = try req.user()
        let teamID = try team.requireID()
        guard let name = req.parameters.get("member"),
              let membership = try await MembershipRecord.query(on: req.db).filter(\.$team.$id == teamID)
                .join(UserRecord.self, on: \MembershipRecord.$user.$id == \UserRecord.$id)
                .filter(UserRecord.self, \.$name == name).first()
        else { throw APIError.notFound("member") }
        if membership.role == .owner {
            let owners = try await MembershipRecord.query(on: req.db).filter(\.$team.$id == teamID).filter(\.$role == .owner).count()
            guard owners > 1 else { throw APIError.conflict("the last owner of a team cannot be removed") }
        }
        try await membership.delete(on: req.db)
        try await Audit.record(on: req.db, teamID: teamID, action: "member.remove", actor: actor.name, target: name, outcome: "ok")
        return .noContent
    }
}
