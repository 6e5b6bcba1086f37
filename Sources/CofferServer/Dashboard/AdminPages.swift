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

    func boot(routes: any RoutesBuilder) throws {
        try routes.register(collection: KeyPages(keys: keys))
        try routes.register(collection: AppPages(apps: apps))
        try routes.register(collection: MemberPages(invitationLifetime: invitationLifetime))
        try routes.register(collection: ActivityPage(usage: usage))
    }
}
