import Fluent
import SQLKit
import Vapor

/// How invitations are revoked: by an owner, one at a time, or with whatever made them
/// (``InvitationIssuer``). A revoked invitation is one with `revoked_at` set; redeeming it answers
/// 410 `invitation_revoked`. Each revocation is a row of its team's audit log, `invitation.revoke`.
extension Invitations {
    /// Revokes a pending invitation of `team`; one already accepted stays accepted (409).
    static func revoke(_ id: UUID, in team: TeamRecord, actor: String, on db: any Database) async throws {
        let teamID = try team.requireID()
        try await db.writeTransaction { db in
            guard let record = try await InvitationRecord.query(on: db).filter(\.$id == id).filter(\.$team.$id == teamID).first() else {
                throw APIError.notFound("invitation")
            }
            guard record.acceptedAt == nil else {
                throw APIError.conflict("this invitation was already accepted by \(record.acceptedBy ?? "someone"); remove the member instead")
            }
            if record.revokedAt == nil {
                record.revokedAt = Date()
                try await record.update(on: db)
            }
            try await Audit.record(on: db, teamID: teamID, action: "invitation.revoke", actor: actor, target: "\(id)", outcome: "ok")
        }
    }

    /// The account `userID` is no longer an owner of `teamID` (removed, or given a lower role):
    /// the invitations it made to the team and that nobody used are revoked, each audited with
    /// `reason`. Runs in that change's transaction, which holds the team (``TeamLock``).
    static func revokePending(madeBy userID: UUID, in teamID: UUID, actor: String, reason: String, on db: any Database) async throws {
        try await revokeUnused(where: "team_id = \(bind: teamID) AND creator_id = \(bind: userID)", actor: actor, reason: reason, on: db)
    }

    /// The token `tokenID` was revoked: the invitations made with it that nobody used are revoked,
    /// each audited. Runs in the revocation's transaction, for each token it revokes (the tokens
    /// made with it too: ``TokenController``).
    static func revokePending(madeWith tokenID: UUID, actor: String, on db: any Database) async throws {
        try await revokeUnused(where: "token_id = \(bind: tokenID)", actor: actor, reason: "the API token that made it was revoked", on: db)
    }

    /// Revokes the unused invitations `condition` selects in one conditional update, so that a
    /// redemption at the same moment either used one first (it stays accepted) or finds it
    /// revoked, and audits each in its team.
    private static func revokeUnused(where condition: SQLQueryString, actor: String, reason: String, on db: any Database) async throws {
        let revoked = try await db.sql().raw("""
            UPDATE \(unsafeRaw: InvitationRecord.schema) SET revoked_at = \(bind: Date()) \
            WHERE \(condition) AND accepted_at IS NULL AND revoked_at IS NULL RETURNING id, team_id
            """).all()
        for row in revoked {
            let id = try row.decode(column: "id", as: UUID.self), teamID = try row.decode(column: "team_id", as: UUID.self)
            try await Audit.record(on: db, teamID: teamID, action: "invitation.revoke", actor: actor, target: "\(id)", outcome: "ok",
                                   reason: reason)
        }
    }
}
