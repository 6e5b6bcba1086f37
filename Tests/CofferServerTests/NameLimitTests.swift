@testable import CofferServer
import Foundation
import Testing

/// Names are bounded in bytes as well as characters: one letter may carry any number of combining
/// marks and still count as one character.
@Suite("Name limits")
struct NameLimitTests {
    static let heavy = "a" + String(repeating: "\u{0301}", count: 5000)

    @Test("a name of one letter and thousands of combining marks is refused by the API and the dashboard; accented and non-Latin names pass")
    func combiningMarks() async throws {
        #expect(Self.heavy.count == 1)
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let world = World(server)
        let refused = try await world.admin.call("POST", "/v1/teams", json: ["name": Self.heavy])
        #expect(refused.status == 400)
        #expect(refused.errorCode == "invalid_request")
        #expect(!refused.text.contains("\u{0301}\u{0301}"))
        for name in ["Zoë", "日本語チーム", "e\u{0301}quipe-2"] {
            let made = try await world.admin.call("POST", "/v1/teams", json: ["name": name])
            #expect(made.status == 201, "\(name): \(made.text)")
        }
        #expect(try await TeamRecord.query(on: server.app.db).all().allSatisfy { $0.name.utf8.count <= Names.maximumBytes })

        let browser = try await DashboardTests.ownerBrowser(server)
        let form = try await browser.post("/dashboard/tokens", ["name": Self.heavy, "password": DashboardTests.password])
        #expect(form.status == 400)
        #expect(try await TokenRecord.query(on: server.app.db).all().allSatisfy { $0.name.utf8.count <= Names.maximumBytes })
    }

    @Test("revoking a key of another team answers as for an unknown key, naming no team")
    func foreignKeyRevocation() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("Secretive")
        let key = try await world.key(in: "Secretive")
        try await world.team("Elsewhere")
        let stranger = try await world.member("stranger", role: "owner", in: "Elsewhere")
        let reply = try await stranger.call("DELETE", "/v1/keys/\(key.id)")
        #expect(reply.status == 404)
        #expect(!reply.text.contains("Secretive"))
        #expect(try await KeyRecord.find(key.id, on: server.app.db)?.revokedAt == nil)
    }
}
