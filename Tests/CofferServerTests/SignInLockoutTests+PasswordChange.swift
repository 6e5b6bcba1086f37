import Foundation
import Testing

@testable import CofferServer

extension SignInLockoutTests {
    /// Whoever once signed in could keep a known-browser cookie per second of sign-ins; once the
    /// member changes the password, each would be a budget of guesses of its own for 180 days.
    @Test("a password change makes the account's known-browser cookies count as unknown, except the new one of the browser that changed it")
    func passwordChangeForgetsKnownBrowsers() async throws {
        // Budgets are per minute: a run that took longer than that minute is repeated (at most
        // three runs), and only one that fits its minute is judged (as in knownBrowserStillSignsIn).
        for run in 1...3 {
            let server = try await TestServer.start { $0.signInAttemptsPerMinute = 3; $0.trustedProxies = "127.0.0.1, ::1" }
            defer { Task { try? await server.stop() } }
            let started = Date()
            let owner = try await DashboardTests.ownerBrowser(server)
            let old = try #require(owner.cookies["coffer_known"], "the set-up's sign-in leaves the known-browser cookie")

            // The owner changes the password; the reply gives this browser a new cookie.
            owner.headers["X-Forwarded-For"] = "192.0.2.7"
            _ = try await owner.get("/dashboard/account")
            let newPassword = "a brand new password"
            let change = try await owner.post("/dashboard/account/password", ["current": DashboardTests.password, "password": newPassword])
            let renewed = owner.cookies["coffer_known"]
            _ = try await owner.get("/dashboard")
            let signedOut = try await owner.post("/dashboard/sign-out", [:]).status

            // Strangers spend the address's budget.
            var strangers: [Int] = []
            for index in 1...3 {
                let browser = Browser(base: server.base)
                browser.headers["X-Forwarded-For"] = "203.0.113.\(index)"
                strangers.append(try await browser.signIn(DashboardTests.ownerEmail, "a wrong password \(index)").status)
            }
            // A guess carrying the cookie made before the change is a stranger's too.
            let holder = Browser(base: server.base)
            holder.headers["X-Forwarded-For"] = "198.51.100.2"
            holder.setCookie("coffer_known", old)
            let withOldCookie = try await holder.signIn(DashboardTests.ownerEmail, "a wrong password 4").status

            // The browser that changed the password is still known: its own budget.
            owner.headers["X-Forwarded-For"] = "192.0.2.8"
            let own = try await owner.signIn(DashboardTests.ownerEmail, newPassword).status
            guard Date().timeIntervalSince(started) < 55 || run == 3 else { continue }
            #expect(change.status == 303 && change.location == "/dashboard/account?changed=1", "\(change.status)")
            #expect(renewed != nil && renewed != old, "the change gives this browser a new known-browser cookie")
            #expect(signedOut == 303)
            #expect(strangers == [401, 401, 401], "\(strangers)")
            #expect(withOldCookie == 429, "a cookie from before the change has a budget of its own: \(withOldCookie)")
            #expect(own == 303, "the browser that changed the password is kept out: \(own)")
            return
        }
    }
}
