import Fluent
import Vapor

extension Request {
    /// Gives the signed-in browser's session a new CSRF token after a form that shows a secret once
    /// (registering an app, rotating its credential, creating an API token, adding a member): the
    /// form just sent then cannot be sent again by a reload or Back, which would make a second
    /// secret and — for a rotation — retire the one just copied. The page answered carries the new
    /// token; other open dashboard tabs must be reloaded before their next change.
    func renewCSRF() async throws {
        guard let session = auth.get(DashboardSession.self) else { return }
        let token = Secrets.make(prefix: "")
        try await SessionRecord.query(on: db).filter(\.$id == session.sessionID).set(\.$csrfToken, to: token).update()
        auth.login(DashboardSession(sessionID: session.sessionID, userID: session.userID, name: session.name, csrfToken: token))
    }
}
