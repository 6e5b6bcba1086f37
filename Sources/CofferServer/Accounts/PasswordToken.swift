import Fluent
import Foundation

/// A dashboard password chosen with an API token (welcome, or set-up with the bootstrap token)
/// is only as good as that token: whoever held a leaked token could choose the password, and
/// revoking the token — the owner's remedy — must take the password back too. Otherwise a token
/// that was revoked would live on as a password and a session.
enum PasswordToken {
    /// The token that chose `userID`'s dashboard password; nil when none did (chosen on joining,
    /// or no password). What that password makes (a token, an invitation) hangs on it.
    static func chosenBy(_ userID: UUID, on db: any Database) async throws -> UUID? {
        try await UserRecord.find(userID, on: db)?.passwordTokenID
    }

    /// Revoking `tokenID` of `userID`: when that token chose the user's password, the password is
    /// cleared and every session of the user ends (audited), and with the password every
    /// known-browser cookie (``KnownBrowsers``); the user chooses a new one on the welcome page
    /// with another token. Runs in the revocation's transaction.
    static func tokenRevoked(_ tokenID: UUID, of userID: UUID, actor: String, on db: any Database) async throws {
        guard let user = try await UserRecord.find(userID, on: db), user.passwordTokenID == tokenID else { return }
        user.passwordHash = nil
        user.passwordTokenID = nil
        try await user.update(on: db)
        try await DashboardSessions.endAll(of: userID, on: db)
        try await Audit.record(on: db, teamID: nil, action: "dashboard.password-cleared", actor: actor, target: user.name, outcome: "ok",
                               reason: "the API token that chose the password was revoked")
    }
}
