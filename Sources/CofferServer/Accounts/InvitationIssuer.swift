import Fluent
import Vapor

/// Who made an invitation, and with which credential. An invitation gives a role in a team, for
/// up to a year, to whoever holds its code, so it is worth no more than what made it: it is revoked
/// when its maker stops being an owner of the team (removed, or given a lower role) and when the
/// token behind it is revoked (``Invitations/revokePending(madeBy:in:actor:reason:on:)``,
/// ``Invitations/revokePending(madeWith:actor:on:)``), and it is refused at redemption while
/// either is so (``standsBehind(_:on:)``). Otherwise an owner about to be removed, or whoever held
/// a leaked owner token, could make an owner's invitation and use it once that access was gone.
struct InvitationIssuer: Sendable {
    /// The account that makes the invitation.
    let userID: UUID
    /// Its name: the invitation's `createdBy`, and the actor in the audit log.
    let name: String
    /// The API token behind it: the one that asked, or on the dashboard (which asks for the
    /// password) the one that chose that password (``PasswordToken``); nil for a password chosen
    /// without a token.
    let tokenID: UUID?

    /// The caller of an API request, with the token it sent.
    static func api(_ req: Request) throws -> InvitationIssuer {
        let user = try req.user()
        return InvitationIssuer(userID: user.userID, name: user.name, tokenID: user.tokenID)
    }

    /// The signed-in member of a dashboard form that asked for the password. A password chosen
    /// with a token is only as good as that token: what it makes hangs on that token, as the
    /// tokens the Tokens page makes do (``TokenPages``).
    static func dashboard(_ req: Request) async throws -> InvitationIssuer {
        let user = try req.user()
        return InvitationIssuer(userID: user.userID, name: user.name, tokenID: try await PasswordToken.chosenBy(user.userID, on: req.db))
    }

    /// Refuses unless the issuer is an owner of `teamID` and its token unrevoked, and holds both
    /// until the caller's write transaction ends (PostgreSQL: the team's row, which removals and
    /// role changes take first, and the token's row `FOR SHARE`, which a revocation's update waits
    /// for; SQLite: the write lock is held already). A removal, a role change or a revocation
    /// running now either ends first, and the invitation is refused, or finds it made and revokes it.
    func ensureEntitled(in teamID: UUID, on tx: any Database) async throws {
        try await TeamLock.hold(teamID, on: tx)
        guard try await Self.isOwner(userID, of: teamID, on: tx) else {
            throw APIError.forbidden("role_required", "this needs the owner role in the team")
        }
        if let tokenID, try await !TokenController.holdLive(tokenID, of: userID, on: tx) {
            throw APIError.unauthorized("the token behind this request was revoked")
        }
    }

    /// Whether the maker and the token of `record` still stand behind it: the maker an owner of
    /// its team, the token unrevoked. Whatever revoked the invitation or not, one they no longer
    /// stand behind is not redeemed. Invitations from before migration 014 record neither.
    static func standsBehind(_ record: InvitationRecord, on db: any Database) async throws -> Bool {
        if let creatorID = record.creatorID, try await !isOwner(creatorID, of: record.$team.id, on: db) { return false }
        if let tokenID = record.tokenID,
           try await TokenRecord.query(on: db).filter(\.$id == tokenID).filter(\.$revokedAt == nil).first() == nil {
            return false
        }
        return true
    }

    /// Whether the account `userID` is an owner of `teamID`.
    static func isOwner(_ userID: UUID, of teamID: UUID, on db: any Database) async throws -> Bool {
        try await MembershipRecord.query(on: db).filter(\.$team.$id == teamID).filter(\.$user.$id == userID)
            .filter(\.$role == .owner).first() != nil
    }
}
