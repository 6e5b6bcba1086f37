import Foundation
import Testing

@testable import CofferServer

/// Someone who knows a member's email address and spends its sign-in budget with wrong passwords
/// keeps out only browsers that never signed in to that account: the member's own browser, known
/// by the cookie its last sign-in left, has a budget of its own.
@Suite("Sign-in lockout")
struct SignInLockoutTests {
    /// Three sign-in attempts a minute per budget, the loopback proxy trusted: each test request
    /// names its client in `X-Forwarded-For`.
    static func limitedBehindAProxy(_ configuration: inout ServerConfiguration) {
        configuration.signInAttemptsPerMinute = 3
        configuration.trustedProxies = "127.0.0.1, ::1"
    }

    /// The status of a sign-in to the owner's account from a new browser at client `address`
    /// (forwarded by the trusted proxy), carrying `known` as its known-browser cookie if given.
    static func signIn(from address: String, on server: TestServer, _ password: String, known: String? = nil) async throws -> Int {
        let browser = Browser(base: server.base)
        browser.headers["X-Forwarded-For"] = address
        if let known { browser.setCookie("coffer_known", known) }
        return try await browser.signIn(DashboardTests.ownerEmail, password).status
    }

    @Test("wrong passwords from anywhere do not keep a known browser out; forged cookies count as unknown")
    func knownBrowserStillSignsIn() async throws {
        let seen = try await TestServer.withinAMinute(adjust: Self.limitedBehindAProxy) { server in
            let owner = try await DashboardTests.ownerBrowser(server)
            let known = try #require(owner.cookies["coffer_known"], "the set-up's sign-in leaves the known-browser cookie")
            #expect(try await owner.post("/dashboard/sign-out", [:]).status == 303)

            // The attacker: a new address for every try, so only the email address's budget counts.
            var attacker: [Int] = []
            for index in 1...4 { attacker.append(try await Self.signIn(from: "203.0.113.\(index)", on: server, "a wrong password \(index)")) }

            // A browser the account has not seen is kept out, even with the right password, and so is
            // one presenting a forged or altered cookie.
            var outsiders = [try await Self.signIn(from: "198.51.100.1", on: server, DashboardTests.password)]
            var altered = Array(known.utf8)
            altered[altered.count - 2] = altered[altered.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            for forged in [String(decoding: altered, as: UTF8.self), "1.\(known.split(separator: ".")[1])", known + "x", "0.abc", ""] {
                outsiders.append(try await Self.signIn(from: "198.51.100.2", on: server, DashboardTests.password, known: forged))
            }

            // The member's own browser signs in.
            owner.headers["X-Forwarded-For"] = "192.0.2.7"
            let own = try await owner.signIn(DashboardTests.ownerEmail, DashboardTests.password).status
            let page = try await owner.get("/dashboard").status

            // Its cookie is no master key: wrong passwords through it spend its own budget.
            let signedOut = try await owner.post("/dashboard/sign-out", [:]).status
            var guesses: [Int] = []
            for index in 1...3 { guesses.append(try await owner.signIn(DashboardTests.ownerEmail, "guess \(index) is wrong").status) }
            return (attacker: attacker, outsiders: outsiders, own: own, page: page, signedOut: signedOut, guesses: guesses)
        }
        #expect(seen.attacker == [401, 401, 401, 429], "\(seen.attacker)")
        #expect(seen.outsiders == Array(repeating: 429, count: 6), "the stranger, then each forged cookie: \(seen.outsiders)")
        #expect(seen.own == 303 && seen.page == 200 && seen.signedOut == 303)
        #expect(seen.guesses == [401, 401, 429], "one of three used by the sign-in above: \(seen.guesses)")
    }

    @Test("a cookie counts only for its email address and password, within its lifetime, unaltered")
    func cookieChecks() throws {
        let browsers = KnownBrowsers(masterKey: try MasterKey(key: .init(size: .bits256)), secureCookies: false)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let hash = "$2b$12$the account's password hash"
        let value = browsers.cookie(for: "a@example.com", passwordHash: hash, now: now).string
        #expect(browsers.validMAC(value, email: "a@example.com", passwordHash: hash, now: now) != nil)
        #expect(browsers.validMAC(value, email: "a@example.com", passwordHash: hash, now: now.addingTimeInterval(KnownBrowsers.lifetime - 1)) != nil)
        #expect(browsers.validMAC(value, email: "b@example.com", passwordHash: hash, now: now) == nil)
        #expect(browsers.validMAC(value, email: "a@example.com", passwordHash: hash + "x", now: now) == nil, "another password")
        #expect(browsers.validMAC(value, email: "a@example.com", passwordHash: hash, now: now.addingTimeInterval(KnownBrowsers.lifetime)) == nil)
        #expect(browsers.validMAC(value, email: "a@example.com", passwordHash: hash, now: now.addingTimeInterval(-120)) == nil, "made in the future")
        let other = KnownBrowsers(masterKey: try MasterKey(key: .init(size: .bits256)), secureCookies: false)
        #expect(other.validMAC(value, email: "a@example.com", passwordHash: hash, now: now) == nil, "another master key")
        let seconds = value.split(separator: ".")[0], tag = value.split(separator: ".")[1]
        for mutated in ["\(Int(seconds)! + 1).\(tag)", "+\(seconds).\(tag)", "\(seconds).\(tag)=", "\(seconds)..\(tag)",
                        "\(seconds).\(tag.dropLast())", String(repeating: "9", count: 13) + ".\(tag)", "\(seconds)", ""] {
            #expect(browsers.validMAC(mutated, email: "a@example.com", passwordHash: hash, now: now) == nil, "\(mutated)")
        }
    }

    @Test("another spelling of a cookie's MAC (+ for -, / for _, the unused low bits of the last character) is the same budget")
    func oneBudgetPerCookie() throws {
        let browsers = KnownBrowsers(masterKey: try MasterKey(key: .init(size: .bits256)), secureCookies: false)
        let hash = "$2b$12$the account's password hash"
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        // Cookies of successive seconds until one has both a `-` and a `_` (about one in four has).
        let (now, value) = try #require((0..<1000).lazy.map { second in
            let now = Date(timeIntervalSince1970: 1_800_000_000 + Double(second))
            return (now, browsers.cookie(for: "a@example.com", passwordHash: hash, now: now).string)
        }.first { $0.1.contains("-") && $0.1.contains("_") })
        func budget(_ spelling: String) -> String {
            KnownBrowsers.budgetKey(email: "a@example.com", mac: browsers.validMAC(spelling, email: "a@example.com", passwordHash: hash, now: now))
        }
        let own = budget(value)
        #expect(own.hasPrefix("known:a@example.com:"))
        let last = try #require(alphabet.firstIndex(of: value.last!))
        var spellings = [value.replacingOccurrences(of: "-", with: "+"), value.replacingOccurrences(of: "_", with: "/"),
                         value.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")]
        // 32 bytes are 256 bits; the 43rd character carries 6, of which the low 2 are not used.
        for flip in 1...3 { spellings.append(String(value.dropLast()) + String(alphabet[last ^ flip])) }
        for spelling in spellings {
            let key = budget(spelling)
            #expect(key == own || key == "email:a@example.com", "\(spelling) is a budget of its own: \(key)")
        }
    }

    @Test("served over https, dashboard answers carry Strict-Transport-Security; over http they do not")
    func strictTransport() async throws {
        for secure in [true, false] {
            let server = try await TestServer.start { $0.secureCookies = secure }
            defer { Task { try? await server.stop() } }
            for path in ["/dashboard/sign-in", "/dashboard/assets/dashboard.css", "/dashboard/no-such-page"] {
                let reply = try await Browser(base: server.base).get(path)
                #expect(reply.header("Strict-Transport-Security") == (secure ? "max-age=31536000" : nil), "\(path) secure=\(secure)")
            }
        }
    }
}
