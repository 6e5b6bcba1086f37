import Fluent
import Vapor

/// Asks a signed-in member for their current password again before a change that a stolen session
/// cookie must not be able to make alone: a new password, a new API token (which would outlive the
/// session).
///
/// Guesses are counted per account in one budget shared by every form that asks, so a stolen
/// session cannot try more passwords by spreading them over several forms.
struct PasswordCheck: Sendable {
    let attempts: RateLimiter

    /// Why `password` does not let the session's member go on, as one sentence for the page, with
    /// its status; nil when it is their current password.
    func refusal(_ req: Request, password: String) async throws -> (sentence: String, status: HTTPStatus)? {
        let session = try req.dashboardSession()
        if let wait = attempts.acquire("password:\(session.userID)") {
            return ("Too many attempts. Wait \(wait) seconds and try again.", .tooManyRequests)
        }
        guard let user = try await UserRecord.find(session.userID, on: req.db), let hash = user.passwordHash,
              try await req.password.async.verify(password, created: hash).get()
        else { return ("The current password is not right.", .badRequest) }
        return nil
    }
}
