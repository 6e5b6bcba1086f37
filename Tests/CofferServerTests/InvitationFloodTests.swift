@testable import CofferServer
import Fluent
import Foundation
import Testing

/// One pending invitation code must not buy unbounded work: before, each redemption with a taken
/// account name (`admin` exists on every server) hashed the password with Bcrypt and then answered
/// 409, which no budget counted, so one code kept the server's 32 hashing slots full and every
/// sign-in got 503.
@Suite("Invitation redemption floods")
struct InvitationFloodTests {
    @Test("redeeming a pending code with a taken name or email is refused (409) and counts against the address's budget (429 past it)",
          arguments: ["/v1/invitations/redeem", "/dashboard/join"])
    func takenNamesAreBudgeted(path: String) async throws {
        // The budget is per minute from the first failure: the eight attempts must fit in it, which a
        // loaded CI machine once missed (the eighth came after the window and was answered 409).
        let statuses = try await TestServer.withinAMinute(adjust: { $0.authFailuresPerAddressPerMinute = 5 }) { server in
            let world = World(server)
            try await world.team("T")
            let code = try await world.invite(role: "viewer", to: "T")
            // The account made on the first start signs in with admin@example.com.
            try await UserRecord.query(on: server.app.db).filter(\.$name == "admin").set(\.$email, to: "admin@example.com").update()
            let anonymous = HTTP(base: server.base)
            var statuses: [Int] = []
            for attempt in 0..<8 {
                // A taken name, or a taken email address.
                let name = attempt.isMultiple(of: 2) ? "admin" : "someone-\(attempt)"
                let email = attempt.isMultiple(of: 2) ? "someone-\(attempt)@example.com" : "admin@example.com"
                let fields = ["code": code, "name": name, "email": email, "password": "a long enough password"]
                if path.hasPrefix("/v1/") {
                    statuses.append(try await anonymous.call("POST", path, json: fields).status)
                } else {
                    let browser = Browser(base: server.base)
                    _ = try await browser.get(path)
                    statuses.append(try await browser.post(path, fields).status)
                }
            }
            return statuses
        }
        #expect(statuses.prefix(5).allSatisfy { $0 == 409 }, "\(statuses)")
        #expect(statuses.suffix(3).allSatisfy { $0 == 429 }, "\(statuses)")
    }
}
