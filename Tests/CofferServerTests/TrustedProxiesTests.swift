@testable import CofferServer
import BlockingTestSupport
import Foundation
import Testing

/// The client address behind reverse proxies: which X-Forwarded-For entries are believed, over
/// real HTTP (the dashboard's sign-in limit) and as units, with mutated headers.
@Suite("Trusted proxies and client addresses", .ownThread)
struct TrustedProxiesTests {
    @Test("addresses and CIDR ranges, IPv4 and IPv6, are read strictly")
    func ranges() throws {
        let valid = ["10.0.0.0/8": "10.0.0.0/8", "10.1.2.3/8": "10.0.0.0/8", "192.168.1.7": "192.168.1.7", "0.0.0.0/0": "0.0.0.0/0",
                     "fd00::/8": "fd00::/8", "::1": "::1", "2001:db8::1/128": "2001:db8::1", "2001:db8:ffff::/33": "2001:db8:8000::/33"]
        for (text, shown) in valid {
            #expect(IPRange(text)?.description == shown, "\(text)")
        }
        for text in ["", "/8", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/8/8", "10.0.0", "010.0.0.1", "1.2.3.4.5",
                     "::1/129", "::g", "fe80::1%eth0", " 10.0.0.1", "10.0.0.1 ", "localhost", "1.2.3.4:80", "[::1]", String(repeating: "1", count: 100)] {
            #expect(IPRange(text) == nil, "\(text) was read as a range")
        }
        let range = try #require(IPRange("172.16.0.0/12"))
        #expect(range.contains(IPRange.address("172.31.255.255")!))
        #expect(!range.contains(IPRange.address("172.32.0.0")!))
        #expect(!range.contains(IPRange.address("::ffff:172.16.0.1")!), "an IPv6 address matched an IPv4 range")
        #expect(throws: TrustedProxies.Invalid.self) { try TrustedProxies(parsing: "10.0.0.0/8, 10.0.0.0/33") }
        #expect((try? TrustedProxies(parsing: "10.0.0.0/8,  fd00::/8\t127.0.0.1"))?.ranges.count == 3)
        do {
            _ = try TrustedProxies(parsing: "proxy.example.com")
        } catch {
            #expect("\(error)" == "COFFER_TRUSTED_PROXIES: \"proxy.example.com\" is not an IP address or a CIDR range such as 10.0.0.0/8")
        }
    }

    @Test("X-Forwarded-For is read only when the peer is a trusted proxy")
    func readsHeaderOnlyWhenTrusted() throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.0/8")
        var reads = 0
        func header() -> [String] {
            reads += 1
            return ["203.0.113.9"]
        }
        #expect(TrustedProxies.none.client(peer: "10.0.0.5", forwardedFor: header()) == "10.0.0.5")
        #expect(proxies.client(peer: "198.51.100.1", forwardedFor: header()) == "198.51.100.1")
        #expect(proxies.client(peer: "not an address", forwardedFor: header()) == "not an address")
        #expect(proxies.client(peer: nil, forwardedFor: header()) == nil)
        #expect(reads == 0)
        #expect(proxies.client(peer: "10.0.0.5", forwardedFor: header()) == "203.0.113.9")
        #expect(reads == 1)
    }

    @Test("the client is the first untrusted address from the right; a client's own entries are never believed")
    func client() throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.0/8, 192.0.2.1")
        // Nothing trusted: the peer, whatever the header says.
        #expect(TrustedProxies.none.client(peer: "10.0.0.5", forwardedFor: ["203.0.113.9"]) == "10.0.0.5")
        // An untrusted peer's header is not believed.
        #expect(proxies.client(peer: "198.51.100.1", forwardedFor: ["203.0.113.9"]) == "198.51.100.1")
        // Through one trusted proxy, and through two.
        #expect(proxies.client(peer: "10.0.0.5", forwardedFor: ["203.0.113.9"]) == "203.0.113.9")
        #expect(proxies.client(peer: "10.0.0.5", forwardedFor: ["203.0.113.9, 192.0.2.1"]) == "203.0.113.9")
        #expect(proxies.client(peer: "10.0.0.5", forwardedFor: ["203.0.113.9", "192.0.2.1"]) == "203.0.113.9")
        // What the client wrote itself stands left of what the proxy appended.
        #expect(proxies.client(peer: "10.0.0.5", forwardedFor: ["10.0.0.1, 203.0.113.9"]) == "203.0.113.9")
        #expect(proxies.client(peer: "10.0.0.5", forwardedFor: ["garbage, 203.0.113.9"]) == "203.0.113.9")
        // Only trusted hops: the leftmost of them; no header: the peer.
        #expect(proxies.client(peer: "10.0.0.5", forwardedFor: ["10.0.0.9, 192.0.2.1"]) == "10.0.0.9")
        #expect(proxies.client(peer: "10.0.0.5", forwardedFor: []) == "10.0.0.5")
        // Garbage right after a trusted proxy ends the walk at the last address known.
        #expect(proxies.client(peer: "10.0.0.5", forwardedFor: ["203.0.113.9, not-an-address"]) == "10.0.0.5")
        #expect(proxies.client(peer: "10.0.0.5", forwardedFor: [""]) == "10.0.0.5")
        #expect(proxies.client(peer: nil, forwardedFor: ["203.0.113.9"]) == nil)
        // A chain longer than the limit stops there.
        let long = Array(repeating: "10.0.0.7", count: 100).joined(separator: ",")
        #expect(proxies.client(peer: "10.0.0.5", forwardedFor: [long]) == "10.0.0.7")
    }

    @Test("mutated X-Forwarded-For headers never crash and name only the peer or one of their own entries")
    func mutations() throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.0/8, ::1, fd00::/8")
        let seeds = ["203.0.113.9, 10.0.0.1", "2001:db8::7, fd00::1, 10.2.3.4", "10.0.0.1,10.0.0.2", " , ,"]
        let alphabet = Array("0123456789abcdef.:,/ []%\t-x".utf8) + [0, 0xFF, 0xC3]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            var bytes = Array(seeds.randomElement(using: &generator)!.utf8)
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                switch Int.random(in: 0..<3, using: &generator) {
                case 0 where !bytes.isEmpty: bytes[Int.random(in: 0..<bytes.count, using: &generator)] = alphabet.randomElement(using: &generator)!
                case 1: bytes.insert(alphabet.randomElement(using: &generator)!, at: Int.random(in: 0...bytes.count, using: &generator))
                default: if !bytes.isEmpty { bytes.remove(at: Int.random(in: 0..<bytes.count, using: &generator)) }
                }
            }
            let header = String(decoding: bytes, as: UTF8.self)
            let client = proxies.client(peer: "10.0.0.5", forwardedFor: [header])
            let entries = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(client == "10.0.0.5" || entries.contains(client ?? ""), "\(header.debugDescription) gave \(client ?? "nil")")
            if let client, client != "10.0.0.5" { #expect(IPRange.address(client) != nil) }
        }
    }

    @Test("budgets count an IPv4 address as itself, an IPv6 address by its /64, an IPv4-mapped one as its IPv4 address")
    func budgetKeys() {
        #expect(AddressBudget.key("203.0.113.7") == "203.0.113.7")
        #expect(AddressBudget.key("2001:db8::1") == "2001:db8::/64")
        #expect(AddressBudget.key("2001:db8:0:0:ffff:ffff:ffff:ffff") == "2001:db8::/64")
        #expect(AddressBudget.key("2001:db8:0:1::1") == "2001:db8:0:1::/64")
        #expect(AddressBudget.key("::ffff:192.0.2.1") == "192.0.2.1")
        #expect(AddressBudget.key("::1") == "::/64")
        #expect(AddressBudget.key("unknown") == "unknown")
        #expect(AddressBudget.key("not:an:address") == "not:an:address")
    }

    @Test("behind a trusted proxy each forwarded client has its own sign-in limit; without trust a forged header changes nothing")
    func signInLimits() async throws {
        func attempts(_ server: TestServer, _ forwarded: [String], tag: String = "") async throws -> [Int] {
            var statuses: [Int] = []
            for (index, address) in forwarded.enumerated() {
                let browser = Browser(base: server.base)
                browser.headers["X-Forwarded-For"] = address
                // A different email each time, so that only the per-address limit applies.
                statuses.append(try await browser.signIn("nobody\(tag)\(index)@example.com", "a wrong password").status)
            }
            return statuses
        }
        // The set-up, from the proxy's own address, is one attempt of its budget, not the clients'.
        // The budgets are per minute from an address's first failure: each run must fit in it, which
        // a loaded CI machine once missed (the fifth attempt came after 203.0.113.1's window).
        let (behindProxy, sixes) = try await TestServer.withinAMinute(adjust: { $0.signInAttemptsPerMinute = 2; $0.trustedProxies = "127.0.0.1, ::1" }) { proxied in
            _ = try await DashboardTests.ownerBrowser(proxied)
            let behindProxy = try await attempts(proxied, ["203.0.113.1", "203.0.113.1", "203.0.113.1", "203.0.113.2", "198.51.100.9, 203.0.113.1"])
            // IPv6 clients are counted by their /64 (a host has all of it): two addresses of one /64
            // share a budget, another /64 has its own.
            let sixes = try await attempts(proxied, ["2001:db8::1", "2001:db8::ffff:2", "2001:db8::3", "2001:db8:0:1::1"], tag: "v6-")
            return (behindProxy, sixes)
        }
        #expect(behindProxy == [401, 401, 429, 401, 429], "\(behindProxy)")
        #expect(sixes == [401, 401, 429, 401], "\(sixes)")

        // Not trusted: every forged address shares the peer's budget (one used by the set-up).
        let forged = try await TestServer.withinAMinute(adjust: { $0.signInAttemptsPerMinute = 3 }) { direct in
            _ = try await DashboardTests.ownerBrowser(direct)
            return try await attempts(direct, ["203.0.113.1", "203.0.113.2", "203.0.113.3"])
        }
        #expect(forged == [401, 401, 429], "\(forged)")

        await #expect(throws: TrustedProxies.Invalid.self) {
            let server = try await TestServer.start { $0.trustedProxies = "10.0.0.0/8, proxy.example.com" }
            try await server.stop()
        }
    }
}
