import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import CofferServer

extension SignInLockoutTests {
    /// Anyone can send wrong passwords from many addresses until the Bcrypt queue is full; the
    /// places kept for known browsers let the member's own browser in all the same.
    @Test("anonymous sign-ins that fill their share of the Bcrypt queue leave a place for a known browser")
    func knownBrowserPassesAQueueOfStrangers() async throws {
        let server = try await TestServer.start {
            $0.passwordHashingThreads = 1
            $0.passwordHashingPlaces = 4
            $0.trustedProxies = "127.0.0.1, ::1"
        }
        defer { Task { try? await server.stop() } }
        let owner = try await DashboardTests.ownerBrowser(server)
        #expect(try await owner.post("/dashboard/sign-out", [:]).status == 303)
        let hashing = server.app.passwordHashing

        // With the pool's only thread held, an admitted check waits in the queue and a refused
        // sign-in is answered at once.
        let held = try await HeldHashingThread(hashing)
        let answered = NIOLockedValueBox(0)
        func signingIn(_ browser: Browser, _ password: String) -> Task<Int, any Error> {
            Task {
                defer { answered.withLockedValue { $0 += 1 } }
                return try await browser.signIn(DashboardTests.ownerEmail, password).status
            }
        }
        let strangers = (1...4).map { index in
            let browser = Browser(base: server.base)
            browser.headers["X-Forwarded-For"] = "203.0.113.\(index)"
            return signingIn(browser, "a wrong password \(index)")
        }
        try await waitUntil("each stranger queued or answered") { hashing.inProgress + answered.withLockedValue { $0 } == 4 }
        owner.headers["X-Forwarded-For"] = "192.0.2.7"
        let own = signingIn(owner, DashboardTests.password)
        try await waitUntil("the owner's sign-in queued or answered") { hashing.inProgress + answered.withLockedValue { $0 } == 5 }
        try await held.release()

        var statuses: [Int] = []
        for stranger in strangers { statuses.append(try await stranger.value) }
        #expect(statuses.sorted() == [401, 401, 401, 503], "three strangers take their share, the fourth is refused: \(statuses)")
        #expect(try await own.value == 303, "the known browser found no place")
    }
}
