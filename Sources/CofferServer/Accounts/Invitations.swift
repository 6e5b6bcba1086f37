import Fluent
import Vapor

/// Team invitations: how a person joins a team. Nobody creates an account or a token for someone
/// else: an owner makes an invitation (a role, one use, an expiry), is shown its code once and
/// gives it to the person, who redeems it with their own account or by making one.
///
/// The code is 256 random bits (`cfi_…`), stored as its SHA-256; it never appears in a URL, a log
/// or the audit log. Redeeming is one conditional update: of two redemptions of one code, one wins.
enum Invitations {
    /// The answer that shows a new invitation's code, the only time it is shown.
    struct Created: Content {
        let id: UUID
        let team: String
        let role: Role
        let note: String
        let expiresAt: Date
        let code: String
    }

    /// An invitation as its team's owners see it (never its code).
    struct View: Content {
        let id: UUID
        let role: Role
        let note: String
        let createdBy: String
        let createdAt: Date?
        let expiresAt: Date
        /// `pending`, `accepted`, `revoked` or `expired`.
        let state: String
        let acceptedBy: String?
        let acceptedAt: Date?
        let revokedAt: Date?
    }

    /// Where a redemption ended: the team joined, with the role.
    struct Joined: Content {
        let team: String
        let role: Role
    }

    /// The longest an invitation may be valid: a year.
    static let longestLifetime: TimeInterval = 365 * 24 * 3600

    /// Makes an invitation to `team` with `role`, valid for `lifetime`, audited. It records its
    /// `issuer`, and goes when the issuer stops being an owner of the team or its token is revoked.
    static func create(in team: TeamRecord, role: Role, note: String, lifetime: TimeInterval, by issuer: InvitationIssuer,
                       on db: any Database) async throws -> Created {
        if !note.isEmpty { try Names.validate(note, what: "invitation note") }
        guard lifetime > 0, lifetime <= longestLifetime else { throw APIError.invalid("an invitation is valid for 1 to 365 days") }
        let teamID = try team.requireID()
        let code = Secrets.make(prefix: "cfi_"), expiresAt = Date().addingTimeInterval(lifetime)
        // The invitation and its audit row are one transaction: no invitation exists that was not
        // audited and shown. A write transaction holding the team and the issuer's token: a removal,
        // a role change or a revocation running now either ends before the issuer is checked
        // (refused) or finds this invitation and revokes it.
        let record = try await db.writeTransaction { db in
            try await issuer.ensureEntitled(in: teamID, on: db)
            let invitation = InvitationRecord(teamID: teamID, role: role, note: note, codeHash: Secrets.hash(code), createdBy: issuer.name,
                                              expiresAt: expiresAt, creatorID: issuer.userID, tokenID: issuer.tokenID)
            try await invitation.create(on: db)
            try await Audit.record(on: db, teamID: teamID, action: "invitation.create", actor: issuer.name,
                                   target: "\(try invitation.requireID()) as \(role.rawValue)\(note.isEmpty ? "" : " for \(note)")", outcome: "ok")
            return invitation
        }
        return Created(id: try record.requireID(), team: team.name, role: role, note: note, expiresAt: record.expiresAt, code: code)
    }

    /// A team's invitations, newest first (at most 500).
    static func list(in team: TeamRecord, on db: any Database) async throws -> [View] {
        try await InvitationRecord.query(on: db).filter(\.$team.$id == team.requireID()).sort(\.$createdAt, .descending).limit(500).all()
            .map(view)
    }

    static func view(_ record: InvitationRecord) throws -> View {
        View(id: try record.requireID(), role: Role(rawValue: record.role) ?? .viewer, note: record.note, createdBy: record.createdBy,
             createdAt: record.createdAt, expiresAt: record.expiresAt, state: record.state(), acceptedBy: record.acceptedBy,
             acceptedAt: record.acceptedAt, revokedAt: record.revokedAt)
    }

    /// Redeems `code` for the existing account `userID`: it joins the invitation's team.
    static func accept(_ code: String, userID: UUID, name: String, on db: any Database) async throws -> Joined {
        try await UniqueViolation.asConflict("you joined this team at the same moment by another request") {
          try await db.writeTransaction { db in
            let record = try await usable(code, on: db)
            let teamID = record.$team.id
            if try await MembershipRecord.query(on: db).filter(\.$team.$id == teamID).filter(\.$user.$id == userID).first() != nil {
                throw APIError.conflict("you are already a member of this team; the invitation is still unused")
            }
            return try await join(record, userID: userID, name: name, on: db)
          }
        }
    }

    /// Checks that `code` names a pending invitation and that no account has `name` or `email`,
    /// without using the code: before costly work such as hashing a password (one pending code
    /// and a taken name would otherwise buy a Bcrypt hash per request). The redemption checks again.
    static func check(_ code: String, name: String, email: String?, on db: any Database) async throws {
        _ = try await usable(code, on: db)
        try await ensureFree(name: name, email: email, on: db)
    }

    /// The code of the 409 for a name or email address another account has.
    static let accountExists = "account_exists"

    /// 409 ``accountExists`` when an account is named `name` or signs in with `email`.
    private static func ensureFree(name: String, email: String?, on db: any Database) async throws {
        guard try await UserRecord.query(on: db).filter(\.$name == name).first() == nil else {
            throw APIError(.conflict, accountExists, "an account named \(name) exists; choose another name, or sign in as \(name) and accept the invitation")
        }
        if let email, try await UserRecord.query(on: db).filter(\.$email == email).first() != nil {
            throw APIError(.conflict, accountExists, "another account signs in with \(email)")
        }
    }

    /// Redeems `code` by creating the account `name` (with the dashboard sign-in `passwordHash` of
    /// `email`, if given) and, with `makeToken`, its first API token, which only the person
    /// redeeming sees.
    static func redeem(_ code: String, name: String, email: String?, passwordHash: String?, makeToken: Bool = true,
                       on db: any Database) async throws -> (Joined, UserRecord, String?) {
        try Names.validate(name, what: "account name")
        return try await UniqueViolation.asConflict("an account named \(name) or with that email address exists; choose another, or sign in and accept the invitation") {
            try await db.writeTransaction { db in
                let record = try await usable(code, on: db)
                try await ensureFree(name: name, email: email, on: db)
                let user = UserRecord(name: name)
                user.email = email
                user.passwordHash = passwordHash
                try await user.create(on: db)
                let joined = try await join(record, userID: user.requireID(), name: name, on: db)
                let token = makeToken ? try await TokenController.issue(for: user.requireID(), name: "first token", on: db).1 : nil
                try await Audit.record(on: db, teamID: nil, action: "account.create", actor: name, target: name, outcome: "ok",
                                       reason: "redeemed invitation \(try record.requireID())")
                return (joined, user, token)
            }
        }
    }

    /// The pending invitation `code` names; 404 for an unknown code, 410 for a used, revoked or
    /// expired one, and 410 as for a revoked one when its maker is no longer an owner of the team
    /// or its token was revoked (``InvitationIssuer``), whatever revoked it or not. Called again in
    /// the redemption's transaction.
    static func usable(_ code: String, on db: any Database) async throws -> InvitationRecord {
        guard code.utf8.count <= 200, let record = try await InvitationRecord.query(on: db).filter(\.$codeHash == Secrets.hash(code)).first() else {
            throw APIError(.notFound, "invalid_invitation", "no invitation has this code; ask the team's owner for a new one")
        }
        let revoked = APIError(.gone, "invitation_revoked", "this invitation was revoked; ask the team's owner for a new one")
        switch record.state() {
        case "accepted": throw APIError(.gone, "invitation_used", "this invitation was already used; ask the team's owner for a new one")
        case "revoked": throw revoked
        case "expired": throw APIError(.gone, "invitation_expired", "this invitation has expired; ask the team's owner for a new one")
        default:
            guard try await InvitationIssuer.standsBehind(record, on: db) else { throw revoked }
            return record
        }
    }

    /// Marks `record` used by `name` (only if it still is pending: one use) and adds the membership.
    private static func join(_ record: InvitationRecord, userID: UUID, name: String, on db: any Database) async throws -> Joined {
        let id = try record.requireID(), now = Date()
        try await InvitationRecord.query(on: db).filter(\.$id == id).filter(\.$acceptedAt == nil).filter(\.$revokedAt == nil)
            .set(\.$acceptedAt, to: now).set(\.$acceptedBy, to: name).update()
        guard try await InvitationRecord.find(id, on: db)?.acceptedBy == name else {
            throw APIError(.gone, "invitation_used", "this invitation was used at the same moment by another request")
        }
        let role = Role(rawValue: record.role) ?? .viewer
        try await MembershipRecord(teamID: record.$team.id, userID: userID, role: role).create(on: db)
        let team = try await TeamRecord.find(record.$team.id, on: db)
        try await Audit.record(on: db, teamID: record.$team.id, action: "invitation.accept", actor: name,
                               target: "\(id) as \(role.rawValue)", outcome: "ok")
        return Joined(team: team?.name ?? "", role: role)
    }
}
