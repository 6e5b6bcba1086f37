import Foundation
import Testing

@testable import CofferServer

extension SignInLockoutTests {
    /// Whoever once signed in could keep a known-browser cookie per second of sign-ins; once the
    /// member changes the password, each would be a budget of guesses of its own for 180 days.
    @Test("a password change makes the account's known-browser cookies count as unknown, except the new one of the browser that changed it")
    func passwordChangeForgetsKnownBrowsers() async throws {
        let newPassword = "a brand new password"
        let seen = try await TestServer.withinAMinute(adjust: Self.limitedBehindAProxy) { server in
            let owner = try await DashboardTests.ownerBrowser(server)
            let old = try #require(owner.cookies["coffer_known"], "the set-up's sign-in leaves the known-browser cookie")

            // The owner changes the password; the reply gives this browser a new cookie.
            owner.headers["X-Forwarded-For"] = "192.0.2.7"
            _ = try await owner.get("/dashboard/account")
            let change = try await owner.post("/dashboard/account/password", ["current": DashboardTests.password, "password": newPassword])
            let renewed = owner.cookies["coffer_known"]
            _ = try await owner.get("/dashboard")
            let signedOut = try await owner.post("/dashboard/sign-out", [:]).status

            // Strangers spend the address's budget.
            var strangers: [Int] = []
            for index in 1...3 { strangers.append(try await Self.signIn(from: "203.0.113.\(index)", on: server, "a wrong password \(index)")) }
            // A guess carrying the cookie made before the change is a stranger's too.
            let withOldCookie = try await Self.signIn(from: "198.51.100.2", on: server, "a wrong password 4", known: old)

            // The browser that changed the password is still known: its own budget.
            owner.headers["X-Forwarded-For"] = "192.0.2.8"
            let own = try await owner.signIn(DashboardTests.ownerEmail, newPassword).status
            return (change: change, cookieRenewed: renewed != nil && renewed != old, signedOut: signedOut, strangers: strangers,
                    withOldCookie: withOldCookie, own: own)
        }
        #expect(seen.change.status == 303 && seen.change.location == "/dashboard/account?changed=1", "\(seen.change.status)")
        #expect(seen.cookieRenewed, "the change gives this browser a new known-browser cookie")
        #expect(seen.signedOut == 303)
        #expect(seen.strangers == [401, 401, 401], "\(seen.strangers)")
        #expect(seen.withOldCookie == 429, "a cookie from before the change has a budget of its own: \(seen.withOldCookie)")
        #expect(seen.own == 303, "the browser that changed the password is kept out: \(seen.own)")
    }
}
