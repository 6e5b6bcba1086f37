import Fluent
import Vapor

/// `/v1/teams/:team/members`: who is in a team, with which role.
///
/// Adding a name that is already a member changes their role. Any other name gets an invitation
/// (``Invitations``), whose code the answer shows once: no account is made or attached by name,
/// and no API token is handed out for someone else.
struct MemberController: RouteCollection {
    struct AddMember: Content { let name: String; let role: Role }
    struct MemberView: Content {
        let name: String
        let role: Role
        /// For a name that is not a member yet: the invitation to give them (its code shown once).
        let invitation: Invitations.Created?
    }

    /// How long the invitations it makes are valid.
    let invitationLifetime: TimeInterval

    func boot(routes: any RoutesBuilder) throws {
        let members = routes.grouped("v1", "teams", ":team", "members")
        members.get(use: list)
        members.post(use: add)
        members.delete(":member", use: remove)
    }

    func list(req: Request) async throws -> [MemberView] {
        let (team, _) = try await req.team(requiring: .viewer)
        return try await MembershipRecord.query(on: req.db).filter(\.$team.$id == team.requireID()).with(\.$user).all()
            .map { MemberView(name: $0.user.name, role: $0.role, invitation: nil) }
            .sorted { $0.name < $1.name }
    }

    func add(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .owner)
        let body = try req.content.decode(AddMember.self)
        let issuer = try InvitationIssuer.api(req)
        let member = try await Self.add(body, to: team, by: issuer, invitationLifetime: invitationLifetime, on: req.db)
        guard member.invitation != nil else { return try await member.encodeResponse(status: .ok, for: req) }
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return try await member.encodeResponse(status: .created, headers: headers, for: req)
    }

    /// The API's and the dashboard's `member add`: a member's name gets `role`; any other name an
    /// invitation from `issuer` (in the answer, its code shown once).
    static func add(_ body: AddMember, to team: TeamRecord, by issuer: InvitationIssuer, invitationLifetime: TimeInterval,
                    on db: any Database) async throws -> MemberView {
        try Names.validate(body.name, what: "member name")
        if try await membership(of: body.name, in: team, on: db) != nil {
            try await changeRole(of: body.name, to: body.role, in: team, actor: issuer.name, on: db)
            return MemberView(name: body.name, role: body.role, invitation: nil)
        }
        let invitation = try await Invitations.create(in: team, role: body.role, note: body.name, lifetime: invitationLifetime, by: issuer, on: db)
        return MemberView(name: body.name, role: body.role, invitation: invitation)
    }

    /// Changes a member's role (never demoting the last owner); 404 for a name that is not a member.
    /// A member no longer an owner loses the invitations they made to the team and nobody used.
    static func changeRole(of name: String, to role: Role, in team: TeamRecord, actor: String, on database: any Database) async throws {
        let teamID = try team.requireID()
        try await database.writeTransaction { db in
            try await TeamLock.hold(teamID, on: db)
            guard let membership = try await membership(of: name, in: team, on: db) else { throw APIError.notFound("member") }
            if membership.role == .owner && role != .owner {
                let owners = try await MembershipRecord.query(on: db).filter(\.$team.$id == teamID).filter(\.$role == .owner).count()
                guard owners > 1 else { throw APIError.conflict("the last owner of a team cannot be demoted") }
            }
            membership.role = role
            try await membership.update(on: db)
            try await Audit.record(on: db, teamID: teamID, action: "member.role", actor: actor, target: "\(name) as \(role.rawValue)", outcome: "ok")
            if role < .owner {
                try await Invitations.revokePending(madeBy: membership.$user.id, in: teamID, actor: actor,
                                                    reason: "\(name), who made it, is no longer an owner", on: db)
            }
        }
    }

    /// The membership of the account `name` in `team`, if it is a member.
    static func membership(of name: String, in team: TeamRecord, on db: any Database) async throws -> MembershipRecord? {
        try await MembershipRecord.query(on: db).filter(\.$team.$id == team.requireID())
            .join(UserRecord.self, on: \MembershipRecord.$user.$id == \UserRecord.$id)
            .filter(UserRecord.self, \.$name == name).first()
    }

    func remove(req: Request) async throws -> HTTPStatus {
        let (team, _) = try await req.team(requiring: .owner)
        let actor = try req.user()
        let teamID = try team.requireID()
        guard let name = req.parameters.get("member") else { throw APIError.notFound("member") }
        try await req.db.writeTransaction { db in
            try await TeamLock.hold(teamID, on: db)
            guard let membership = try await Self.membership(of: name, in: team, on: db) else { throw APIError.notFound("member") }
            if membership.role == .owner {
                let owners = try await MembershipRecord.query(on: db).filter(\.$team.$id == teamID).filter(\.$role == .owner).count()
                guard owners > 1 else { throw APIError.conflict("the last owner of a team cannot be removed") }
            }
            let userID = membership.$user.id
            try await membership.delete(on: db)
            try await Audit.record(on: db, teamID: teamID, action: "member.remove", actor: actor.name, target: name, outcome: "ok")
            try await Invitations.revokePending(madeBy: userID, in: teamID, actor: actor.name,
                                                reason: "\(name), who made it, was removed from the team", on: db)
        }
        return .noContent
    }
}
