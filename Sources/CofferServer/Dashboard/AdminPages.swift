import Vapor

/// The team-administration half of the dashboard: keys, apps, members, and the activity log with
/// its charts (the signed-in member's API tokens are ``TokenPages``, registered beside the account page). Each page runs the API's own code for its
/// changes (the controllers' handlers or the functions they share with them), so the rules and
/// the audit entries are the API's.
struct AdminPages: RouteCollection {
    let keys: KeyController
    let apps: AppController
    let usage: UsageCounter
    /// How long the invitations made on the members page are valid.
    let invitationLifetime: TimeInterval
    /// Asks for the member's password before an app credential, an invitation or a role change is
    /// made (shared with the token and password pages: one per-account budget of attempts).
    let passwordCheck: PasswordCheck
    /// Whether the dashboard's cookies are `Secure` (the key page's download ticket is one).
    let secureCookies: Bool

    func boot(routes: any RoutesBuilder) throws {
        try routes.register(collection: KeyPages(keys: keys, secureCookies: secureCookies))
        try routes.register(collection: AppPages(apps: apps, check: passwordCheck))
        try routes.register(collection: MemberPages(invitationLifetime: invitationLifetime, check: passwordCheck))
        try routes.register(collection: ActivityPage(usage: usage))
    }
}
