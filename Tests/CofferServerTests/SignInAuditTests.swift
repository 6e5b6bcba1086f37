import Fluent
import Foundation
import Testing

@testable import CofferServer

/// Dashboard sign-ins, failed sign-ins and sign-outs are in the audit log with who and from where,
/// and never with a password, a session token or a CSRF token.
@Suite("Sign-in audit")
struct SignInAuditTests {
    @Test("successful and failed sign-ins and sign-outs are audited without secrets")
    func audited() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let owner = try await DashboardTests.ownerBrowser(server)
        let wrongPassword = "not the password at all 1"
        let mistyped = Browser(base: server.base)
        #expect(try await mistyped.signIn(DashboardTests.ownerEmail, wrongPassword).status == 401)
        #expect(try await Browser(base: server.base).signIn("nobody@example.com", wrongPassword).status == 401)
        // A password typed into the address field is not kept either.
        #expect(try await Browser(base: server.base).signIn(DashboardTests.password, DashboardTests.password).status == 401)
        let browser = Browser(base: server.base)
        #expect(try await browser.signIn(DashboardTests.ownerEmail, DashboardTests.password).status == 303)
        let session = try #require(browser.cookies["coffer_session"])
        let csrf = browser.csrf
        #expect(!csrf.isEmpty)
        #expect(try await browser.post("/dashboard/sign-out", [:]).status == 303)

        let rows = try await AuditRecord.query(on: server.app.db).sort(\.$at).all()
            .filter { $0.action.hasPrefix("dashboard.sign") }
        let summary = rows.map { "\($0.action) \($0.outcome) \($0.actor) \($0.target)" }
        #expect(summary == [
            "dashboard.sign-in failed admin owner@example.com",
            "dashboard.sign-in failed nobody@example.com nobody@example.com",
            "dashboard.sign-in failed (not an email address) (not an email address)",
            "dashboard.sign-in ok admin owner@example.com",
            "dashboard.sign-out ok admin owner@example.com",
        ], "\(summary)")
        for row in rows {
            #expect(row.reason?.contains("127.0.0.1") == true, "the client address: \(row.reason ?? "nil")")
            let text = [row.action, row.actor, row.target, row.outcome, row.reason ?? "", row.deviceID ?? ""].joined(separator: " ")
            for secret in [DashboardTests.password, wrongPassword, session, csrf, owner.cookies["coffer_session"] ?? "", owner.csrf] where !secret.isEmpty {
                #expect(!text.contains(secret), "an audit row holds a secret")
            }
        }
    }
}
