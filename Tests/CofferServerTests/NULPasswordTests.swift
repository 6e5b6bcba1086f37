import Foundation
import Testing

@testable import CofferServer

/// Bcrypt reads a password as a C string, up to its first NUL: a password `a` + NUL + anything would
/// be stored as `a`, and any password with that prefix would sign in. No password is chosen with a
/// NUL, and one presented with a NUL matches nothing.
@Suite("Passwords with a NUL character")
struct NULPasswordTests {
    @Test("a password with U+0000 anywhere is refused where passwords are chosen, saying why")
    func refusedWhenChosen() throws {
        for password in ["\0" + "a long enough password", "a long enough\0password", "a long enough password\0"] {
            do {
                _ = try Credentials.password(password)
                Issue.record("a password with a NUL was taken: \(password.utf8.count) bytes")
            } catch DashboardError.invalidForm(let reason) {
                #expect(reason == "Choose a password without the NUL character (U+0000): Bcrypt ignores what follows it.")
            }
        }
        #expect(try Credentials.password("a long enough password") == "a long enough password")
    }

    @Test("a presented password with a NUL matches nothing, not even the hash of what precedes it")
    func matchesNothing() async throws {
        let hashing = PasswordHashing(cost: 4)
        let hash = try await hashing.hash("a long enough password")
        #expect(try await hashing.verify("a long enough password", created: hash, as: .known))
        #expect(try await hashing.verify("a long enough password\0and more", created: hash, as: .known) == false)
        #expect(try await hashing.verify("a long enough password\0and more", created: hash, as: .stranger) == false)
        await hashing.shutdown()
    }

    @Test("set-up and a password change refuse a NUL; a sign-in with one is a wrong password")
    func overHTTP() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let browser = Browser(base: server.base)
        _ = try await browser.get("/dashboard/setup")
        let refused = try await browser.post("/dashboard/setup", [
            "token": server.adminToken, "email": DashboardTests.ownerEmail, "password": "correct horse\0and anything",
        ])
        #expect(refused.status == 400)
        #expect(refused.html.contains("without the NUL character"))
        #expect(try await browser.post("/dashboard/setup", [
            "token": server.adminToken, "email": DashboardTests.ownerEmail, "password": DashboardTests.password,
        ]).status == 303)

        _ = try await browser.get("/dashboard/account")
        let change = try await browser.post("/dashboard/account/password", [
            "current": DashboardTests.password, "password": "a new password\0and anything",
        ])
        #expect(change.status == 400)
        #expect(change.html.contains("without the NUL character"))

        // The stored password followed by a NUL and more: Bcrypt alone would have let it in.
        let other = Browser(base: server.base)
        #expect(try await other.signIn(DashboardTests.ownerEmail, DashboardTests.password + "\0and more").status == 401)
        #expect(try await other.signIn(DashboardTests.ownerEmail, DashboardTests.password).status == 303)
    }
}
