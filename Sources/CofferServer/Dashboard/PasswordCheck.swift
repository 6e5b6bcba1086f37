import Fluent
import Vapor

/// Asks a signed-in member for their current password again before a change that a stolen session
/// cookie must not be able to make alone, because it would outlive the session: a new password, a
/// new API token, an app's credential (registering or rotating an app), an invitation or a member
/// added to a team.
///
/// Guesses are counted per account in one budget shared by every form that asks, so a stolen
/// session cannot try more passwords by spreading them over several forms.
struct PasswordCheck: Sendable {
    let attempts: RateLimiter

    /// Why `password` does not let the session's member go on, with the status for the page.
    struct Refusal: Error {
        let sentence: String
        let status: HTTPStatus
    }

    /// Why the form's `password` field (the member's current password, as the forms that ask again
    /// name it) does not let the session's member go on, or nil when it does.
    func refusal(_ req: Request) async throws -> Refusal? {
        let password = try FormFields(request: req).raw("password", label: "Your current password", limit: 200)
        if case .failure(let refusal) = try await verify(req, password: password) { return refusal }
        return nil
    }

    /// The session's member when `password` is their current password, else why not.
    func verify(_ req: Request, password: String) async throws -> Result<UserRecord, Refusal> {
        let session = try req.dashboardSession()
        if let wait = attempts.acquire("password:\(session.userID)") {
            return .failure(Refusal(sentence: "Too many attempts. Wait \(wait) seconds and try again.", status: .tooManyRequests))
        }
        guard let user = try await UserRecord.find(session.userID, on: req.db), let hash = user.passwordHash,
              try await req.passwordHashing.verify(password, created: hash, as: .known)
        else { return .failure(Refusal(sentence: "The current password is not right.", status: .badRequest)) }
        return .success(user)
    }
}
