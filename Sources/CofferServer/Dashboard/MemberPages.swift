import Fluent
import Vapor

/// `/dashboard/teams/TEAM/members`: who is in the team with which role; an owner invites members,
/// changes roles, revokes invitations and removes members with the API's code and rules
/// (``MemberController``, ``Invitations``: the last owner can be neither demoted nor removed).
///
/// Inviting makes an invitation; the page that answers shows its code once, to hand to the person,
/// who redeems it at `/dashboard/join` with their own account or a new one. Inviting and changing a
/// role ask for the owner's current password: a member invited or promoted with a stolen session
/// would keep the team's access after the session ends.
struct MemberPages: RouteCollection {
    struct Row: Encodable, Sendable {
        let name: String
        let role: String
        let since: String
        let isYou: Bool
        /// The team's only owner: the API refuses to remove them, so no button is offered.
        let isLastOwner: Bool
        let rolePath: String
        let removePath: String
    }
    struct Shown: Encodable, Sendable {
        let note: String
        let role: String
        let code: String
        let expires: String
    }
    struct InvitationRow: Encodable, Sendable {
        let note: String
        let role: String
        let state: String
        let createdBy: String
        let expires: String
        let acceptedBy: String
        let pending: Bool
        let revokePath: String
    }
    struct Page: Encodable, Sendable {
        let chrome: Chrome
        let tabs: TeamTabs
        let team: String
        let canChange: Bool
        let action: String
        let members: [Row]
        let invitations: [InvitationRow]
        let roles: [String]
        let name: String
        let role: String
        let shown: Shown?
        let notice: String?
        let error: String?
    }

    func boot(routes: any RoutesBuilder) throws {
        let team = routes.grouped("dashboard", "teams", ":team", "members")
        team.get(use: show)
        team.on(.POST, body: .collect(maxSize: "16kb"), use: add)
        team.on(.POST, ":member", "role", body: .collect(maxSize: "16kb"), use: changeRole)
        team.on(.POST, ":member", "remove", body: .collect(maxSize: "16kb"), use: remove)
        routes.on(.POST, "dashboard", "teams", ":team", "invitations", ":invitation", "revoke", body: .collect(maxSize: "16kb"), use: revokeInvitation)
    }

    /// How long the invitations made here are valid.
    let invitationLifetime: TimeInterval
    /// Asks for the owner's current password before anyone is invited or a role changes.
    let check: PasswordCheck

    func show(req: Request) async throws -> Response {
        try await page(req, name: "", role: Role.developer.rawValue, shown: nil, notice: nil, error: nil)
    }

    func add(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .owner)
        let fields = FormFields(request: req)
        let name = try fields.text("name", label: "The member name", limit: 100)
        let roleText = try fields.text("role", label: "The role", limit: 20)
        guard let role = Role(rawValue: roleText) else {
            return try await page(req, name: name, role: roleText, shown: nil, notice: nil, error: "Choose a role: viewer, developer or owner.", status: .badRequest)
        }
        if let refusal = try await check.refusal(req) {
            return try await page(req, name: name, role: roleText, shown: nil, notice: nil, error: refusal.sentence, status: refusal.status)
        }
        do {
            // The password was asked: the invitation hangs on the token that chose it, if one did.
            let issuer = try await InvitationIssuer.dashboard(req)
            let member = try await MemberController.add(.init(name: name, role: role), to: team, by: issuer,
                                                        invitationLifetime: invitationLifetime, on: req.db)
            guard let invitation = member.invitation else {
                return try await page(req, name: "", role: Role.developer.rawValue, shown: nil,
                                      notice: "\(name) is now \(Self.article(role)) \(role.rawValue) of \(team.name).", error: nil)
            }
            try await req.renewCSRF()
            let shown = Shown(note: name, role: role.rawValue, code: invitation.code, expires: CollectionPage.date(invitation.expiresAt))
            return try await page(req, name: "", role: Role.developer.rawValue, shown: shown, notice: nil, error: nil)
        } catch let error as APIError where error.status != .forbidden {
            return try await page(req, name: name, role: roleText, shown: nil, notice: nil, error: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
        }
    }

    func changeRole(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .owner)
        let name = try req.parameters.require("member")
        let fields = FormFields(request: req)
        guard let role = Role(rawValue: try fields.text("role", label: "The role", limit: 20)) else {
            throw DashboardError.invalidForm("Choose a role: viewer, developer or owner.")
        }
        if let refusal = try await check.refusal(req) {
            return try await page(req, name: "", role: Role.developer.rawValue, shown: nil, notice: nil, error: refusal.sentence, status: refusal.status)
        }
        do {
            try await MemberController.changeRole(of: name, to: role, in: team, actor: try req.user().name, on: req.db)
        } catch let error as APIError where error.status == .conflict {
            return try await page(req, name: "", role: Role.developer.rawValue, shown: nil, notice: nil, error: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
        }
        return req.seeOther(TeamTabs.path(team.name, "members"))
    }

    func remove(req: Request) async throws -> Response {
        let team = try req.parameters.require("team")
        do {
            _ = try await MemberController(invitationLifetime: invitationLifetime).remove(req: req)
        } catch let error as APIError where error.status == .conflict {
            return try await page(req, name: "", role: Role.developer.rawValue, shown: nil, notice: nil, error: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
        }
        // An owner who left the team can no longer see its members.
        let leftTeam = try req.parameters.require("member") == (try req.user().name)
        return req.seeOther(leftTeam ? "/dashboard" : TeamTabs.path(team, "members"))
    }

    func revokeInvitation(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .owner)
        guard let id = req.parameters.get("invitation", as: UUID.self) else { throw APIError.notFound("invitation") }
        do {
            try await Invitations.revoke(id, in: team, actor: try req.user().name, on: req.db)
        } catch let error as APIError where error.status == .conflict {
            return try await page(req, name: "", role: Role.developer.rawValue, shown: nil, notice: nil, error: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
        }
        return req.seeOther(TeamTabs.path(team.name, "members"))
    }

    static func article(_ role: Role) -> String { role == .owner ? "an" : "a" }

    private func page(_ req: Request, name: String, role: String, shown: Shown?, notice: String?, error: String?, status: HTTPStatus = .ok) async throws -> Response {
        let (team, myRole) = try await req.team(requiring: .viewer)
        let me = try req.user()
        let base = TeamTabs.path(team.name, "members")
        let memberships = try await MembershipRecord.query(on: req.db).filter(\.$team.$id == team.requireID()).with(\.$user).all()
        let owners = memberships.filter { $0.role == .owner }.count
        let rows = memberships
            .sorted { ($0.role, $1.user.name) > ($1.role, $0.user.name) }
            .map { membership in
                let path = base + "/" + CollectionPages.escape(membership.user.name)
                return Row(name: membership.user.name, role: membership.role.rawValue, since: CollectionPage.date(membership.createdAt),
                           isYou: membership.$user.id == me.userID,
                           isLastOwner: membership.role == .owner && owners == 1, rolePath: path + "/role", removePath: path + "/remove")
            }
        let invitations = myRole == .owner ? try await Invitations.list(in: team, on: req.db).prefix(50).map { invitation in
            InvitationRow(note: invitation.note, role: invitation.role.rawValue, state: invitation.state, createdBy: invitation.createdBy,
                          expires: CollectionPage.date(invitation.expiresAt), acceptedBy: invitation.acceptedBy ?? "",
                          pending: invitation.state == "pending",
                          revokePath: TeamTabs.path(team.name, "invitations") + "/\(invitation.id.uuidString.lowercased())/revoke")
        } : []
        return try await req.page("members", Page(
            chrome: try Chrome.make(req, title: "Members · \(team.name)", section: "team"), tabs: TeamTabs(team: team.name, current: "members"),
            team: team.name, canChange: myRole == .owner, action: base, members: rows, invitations: invitations, roles: Role.allCases.map(\.rawValue),
            name: name, role: role, shown: shown, notice: notice, error: error), status: status)
    }
}
