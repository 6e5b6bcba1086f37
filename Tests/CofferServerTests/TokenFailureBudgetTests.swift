import Foundation
import Testing

@testable import CofferServer

/// API tokens when the client's address is past its budget of failures (wrong tokens here, or
/// wrong app credentials of devices behind the same NAT).
@Suite("Failed API tokens")
struct TokenFailureBudgetTests {
    @Test("past an address's failure budget a token that worked lately still works; one not seen gets 429, a revoked one 401")
    func recentTokens() async throws {
        let server = try await TestServer.start { $0.authFailuresPerAddressPerMinute = 3 }
        defer { Task { try? await server.stop() } }
        let admin = HTTP(base: server.base, token: server.adminToken)
        func token(_ name: String) async throws -> (id: String, value: String) {
            let created = try await admin.call("POST", "/v1/tokens", json: ["name": name])
            #expect(created.status == 201, "\(created.text)")
            return (created.object["id"] as? String ?? "", created.object["token"] as? String ?? "")
        }
        let unseen = try await token("unseen"), revoked = try await token("revoked")
        #expect(try await HTTP(base: server.base, token: revoked.value).call("GET", "/v1/teams").status == 200)
        #expect(try await admin.call("DELETE", "/v1/tokens/\(revoked.id)").status == 204)

        let wrong = HTTP(base: server.base, token: "cft_" + String(repeating: "x", count: 40))
        for attempt in 1...3 { #expect(try await wrong.call("GET", "/v1/teams").status == 401, "attempt \(attempt)") }
        let refused = try await wrong.call("GET", "/v1/teams")
        #expect(refused.status == 429 && refused.header("Retry-After") != nil, "\(refused.text)")
        #expect(try await admin.call("GET", "/v1/teams").status == 200, "the token that worked lately")
        #expect(try await HTTP(base: server.base, token: unseen.value).call("GET", "/v1/teams").status == 429, "a token not seen yet")
        // Seen before its revocation: it is looked up, so the revocation holds; then it is forgotten.
        #expect(try await HTTP(base: server.base, token: revoked.value).call("GET", "/v1/teams").status == 401)
        #expect(try await HTTP(base: server.base, token: revoked.value).call("GET", "/v1/teams").status == 429)
    }

    @Test("remembered hashes expire, and a full table makes room")
    func table() {
        let recent = RecentTokens(lifetime: 60, capacity: 2)
        let now = Date()
        recent.succeeded("a", now: now)
        #expect(recent.vouches(for: "a", now: now.addingTimeInterval(59)))
        #expect(!recent.vouches(for: "a", now: now.addingTimeInterval(61)))
        recent.succeeded("b", now: now)
        recent.succeeded("c", now: now.addingTimeInterval(120))  // full: "a" and "b" have expired by then
        #expect(recent.vouches(for: "c", now: now.addingTimeInterval(121)) && !recent.vouches(for: "b", now: now))
        recent.forget("c")
        #expect(!recent.vouches(for: "c", now: now.addingTimeInterval(121)))
    }
}
