import Vapor

/// What every page's layout shows: the title, who is signed in, and the CSRF token its forms
/// (sign-out included) carry. Leaf escapes every `#(value)`; templates never use `#unsafeHTML`.
struct Chrome: Encodable, Sendable {
    let title: String
    /// The signed-in user's name; nil on the sign-in and set-up pages.
    let user: String?
    let csrf: String
    /// The navigation entry to mark as current.
    let section: String

    /// For a signed-in page.
    static func make(_ req: Request, title: String, section: String = "collections") throws -> Chrome {
        let session = try req.dashboardSession()
        return Chrome(title: title, user: session.name, csrf: session.csrfToken, section: section)
    }
}

extension Request {
    /// Renders `template` with `context` as an HTML page with `status`.
    func page(_ template: String, _ context: some Encodable & Sendable, status: HTTPStatus = .ok) async throws -> Response {
        let response = try await view.render(template, context).encodeResponse(for: self)
        response.status = status
        return response
    }

    /// The token for a form shown before sign-in: the browser's pre-sign-in CSRF cookie if it has a
    /// sound one, else a new one that ``Response/setPreSessionCookie(_:sessions:)`` stores.
    func preSessionCSRF(sessions: DashboardSessions) -> String {
        if let value = cookies[sessions.preSessionCookieName]?.string, (20...100).contains(value.count) { return value }
        return Secrets.make(prefix: "")
    }

    /// A 303 to `path` (after a POST, so that reloading does not post again).
    func seeOther(_ path: String) -> Response {
        redirect(to: path, redirectType: .normal)
    }
}

extension Response {
    /// Stores the pre-sign-in CSRF token with the form that carries it.
    func setPreSessionCookie(_ token: String, sessions: DashboardSessions) {
        cookies[sessions.preSessionCookieName] = sessions.cookie(token, expires: nil)
    }
}

/// Reads a bounded, trimmed text field of a submitted form.
struct FormFields {
    let request: Request

    /// The field's value, trimmed; "" when absent. Refuses one longer than `limit` characters.
    func text(_ name: String, label: String, limit: Int = 200) throws -> String {
        let value = (try? request.content.get(String.self, at: name)) ?? ""
        // Bytes too: one character may carry any number of combining marks.
        guard value.count <= limit, value.utf8.count <= limit * 4 else { throw DashboardError.invalidForm("\(label) is limited to \(limit) characters.") }
        return value.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The field's value exactly as sent (passwords are not trimmed).
    func raw(_ name: String, label: String, limit: Int) throws -> String {
        let value = (try? request.content.get(String.self, at: name)) ?? ""
        // Bytes too: one character may carry any number of combining marks.
        guard value.count <= limit, value.utf8.count <= limit * 4 else { throw DashboardError.invalidForm("\(label) is limited to \(limit) characters.") }
        return value
    }
}
