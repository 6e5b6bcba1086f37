import Vapor

/// What stops a dashboard request before its page: shown as a page that says so in words.
enum DashboardError: Error {
    /// No live session: the browser is sent to the sign-in page.
    case signInRequired
    /// A form arrived without the CSRF token of the session (or of the sign-in page).
    case csrfRefused
    /// A form field is missing, too long or malformed.
    case invalidForm(String)
}
