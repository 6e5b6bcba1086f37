@testable import CofferServer
import CofferFormat
import Crypto
import Fluent
import Foundation
import Testing

/// The issue's walk-through, over the real HTTP interface: team, app, key, seal, upload,
/// download with Range, key delivery to a device of the same team, refusal of another team's.
@Suite("Model keys and key delivery")
struct KeyDeliveryTests {
    static func run(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres)
        let world = World(server)
        try await world.team("Flowers")
        try await world.team("Weeds")
        let app = try await world.app(in: "Flowers")
        let otherApp = try await world.app(in: "Weeds")
        let modelKey = try await world.key(in: "Flowers")
        try await world.release(modelKey, in: "Flowers", to: [app.id])

        // A model sealed with the server-created key opens with the .modelkey copy.
        let plaintext = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let sealed = try SealedModel.seal(plaintext, name: "clf.mlmodel", using: .modelKey(modelKey))
        #expect(try SealedModel.open(sealed, using: .modelKey(modelKey)) == plaintext)

        // Same-team device gets the key sealed to it, and only its private key opens it.
        let device = Device()
        let reply = try await device.request(modelKey.id, app: app, on: server)
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        #expect(reply.object["suite"] as? String == "HPKE-X25519-SHA256-ChaCha20Poly1305")
        let delivered = try device.open(reply, keyID: modelKey.id)
        #expect(delivered == modelKey.key)
        #expect(!String(decoding: reply.body, as: UTF8.self).contains(modelKey.key.withUnsafeBytes { Data($0).base64EncodedString() }))
        #expect(throws: (any Error).self) { _ = try device.open(reply, keyID: modelKey.id, with: .init()) }
        let deliveredKey = try ModelKey(id: modelKey.id, name: "", created: Date(), key: delivered)
        #expect(try SealedModel.open(sealed, using: .modelKey(deliveredKey)) == plaintext)

        // Another team's device is refused, and the refusal is in the key owner's audit log.
        let refused = try await Device().request(modelKey.id, app: otherApp, on: server)
        #expect(refused.status == 403)
        #expect(refused.errorCode == "other_team")
        let audit = try await world.admin.call("GET", "/v1/teams/Flowers/audit")
        #expect(audit.array.contains { $0["outcome"] as? String == "refused" && $0["reason"] as? String == "other_team" })
        #expect(audit.array.contains { $0["outcome"] as? String == "delivered" && $0["deviceID"] as? String == device.id })

        // Unknown key: 404. Wrong credential: 401.
        #expect(try await device.request("0000", app: app, on: server).status == 404)
        #expect(try await device.request(modelKey.id, app: (app.id, "cfa_wrong"), on: server).errorCode == "invalid_credential")

        // Restart on the same data: everything is still there and still works.
        try await server.stop(removingData: false)
        let again = try await TestServer.start(server.configuration)
        let keys = try await HTTP(base: again.base, token: again.adminToken).call("GET", "/v1/teams/Flowers/keys")
        #expect(keys.array.map { $0["id"] as? String } == [modelKey.id])
        let afterRestart = try await device.request(modelKey.id, app: app, on: again)
        #expect(try device.open(afterRestart, keyID: modelKey.id) == modelKey.key)
        try await again.stop()
    }

    @Test("the walk-through over SQLite")
    func sqlite() async throws { try await Self.run(.sqlite) }

    @Test("the walk-through over PostgreSQL", .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.run(.postgres) }

    @Test("revoked keys, revoked apps and rotated credentials get 403 with a reason; limits give 429")
    func refusals() async throws {
        let server = try await TestServer.start { $0.deliveriesPerDevicePerMinute = 3 }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let app = try await world.app(in: "T")
        let key = try await world.key(in: "T")
        try await world.release(key, in: "T", to: [app.id])
        let device = Device()

        for _ in 0..<3 { #expect(try await device.request(key.id, app: app, on: server).status == 200) }
        let limited = try await device.request(key.id, app: app, on: server)
        #expect(limited.status == 429)
        #expect(limited.errorCode == "rate_limited")
        #expect(Int(limited.header("Retry-After") ?? "") ?? 0 >= 1)

        let rotated = try await world.admin.call("POST", "/v1/teams/T/apps/\(app.id)/credential")
        let newCredential = rotated.object["credential"] as! String
        #expect(newCredential != app.credential)
        #expect(try await Device().request(key.id, app: app, on: server).errorCode == "credential_revoked")
        #expect(try await Device().request(key.id, app: (app.id, newCredential), on: server).status == 200)

        #expect(try await world.admin.call("DELETE", "/v1/keys/\(key.id)").status == 204)
        #expect(try await Device().request(key.id, app: (app.id, newCredential), on: server).errorCode == "key_revoked")

        let key2 = try await world.key(in: "T", name: "second")
        try await world.release(key2, in: "T", to: [app.id])
        #expect(try await world.admin.call("DELETE", "/v1/teams/T/apps/\(app.id)").status == 204)
        #expect(try await Device().request(key2.id, app: (app.id, newCredential), on: server).errorCode == "app_revoked")

        let metrics = try await HTTP(base: server.base).call("GET", "/metrics")
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains("coffer_key_deliveries_total{outcome=\"delivered\"} 4"))
        #expect(text.contains("coffer_key_deliveries_total{outcome=\"rate_limited\"} 1"))
        #expect(text.contains("# HELP coffer_key_deliveries_total Key delivery requests by outcome"))
        #expect(text.contains("# TYPE coffer_http_requests_total counter"))
        #expect(text.contains("coffer_http_requests_total{method=\"DELETE\",status=\"204\"} 2"))
    }

    @Test("model keys rest encrypted under the master key, which never enters the database")
    func envelope() async throws {
        let server = try await TestServer.start()
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        try await server.stop(removingData: false)
        defer { try? FileManager.default.removeItem(atPath: server.dataDirectory) }
        let database = try Data(contentsOf: URL(fileURLWithPath: server.dataDirectory + "/coffer.sqlite"))
        let material = key.key.withUnsafeBytes { Data($0) }
        let masterFile = try String(contentsOfFile: server.dataDirectory + "/master.key", encoding: .utf8)
        let master = Data(base64Encoded: masterFile.trimmingCharacters(in: .whitespacesAndNewlines))!
        #expect(database.range(of: material) == nil)
        #expect(database.range(of: master) == nil)
        #expect(!String(decoding: database, as: UTF8.self).contains(server.adminToken))
        let masterMode = try FileManager.default.attributesOfItem(atPath: server.dataDirectory + "/master.key")[.posixPermissions] as? Int
        #expect(masterMode == 0o600)
        let folderMode = try FileManager.default.attributesOfItem(atPath: server.dataDirectory)[.posixPermissions] as? Int
        #expect(folderMode == 0o700)
    }
}

@Suite("Teams and members")
struct TeamTests {
    @Test("the last owner can be neither removed nor demoted; names '.' and '..' are refused")
    func lastOwner() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        #expect(try await world.admin.call("POST", "/v1/teams/T/members", json: ["name": "admin", "role": "viewer"]).status == 409)
        #expect(try await world.admin.call("DELETE", "/v1/teams/T/members/admin").status == 409)
        _ = try await world.member("second", role: "owner", in: "T")
        #expect(try await world.admin.call("POST", "/v1/teams/T/members", json: ["name": "admin", "role": "viewer"]).status == 200)
        for name in [".", ".."] {
            #expect(try await world.admin.call("POST", "/v1/teams", json: ["name": name]).status == 400)
        }
        #expect(try await world.admin.call("POST", "/v1/teams", json: ["name": "T"]).status == 409)
    }

    @Test("another team's many apps asking for a team's keys take one audit row a minute, not the rows the team's own refusals need")
    func otherTeamsCannotCrowdTheAuditLog() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("Victim")
        try await world.team("Crowd")
        let app = try await world.app(in: "Victim")
        let key = try await world.key(in: "Victim")
        try await world.release(key, in: "Victim", to: [app.id])
        var crowd: [(id: String, credential: String)] = []
        for index in 0..<RefusalLog().maximumRowsPerTeamPerMinute { crowd.append(try await world.app(in: "Crowd", name: "crowd-\(index)")) }
        // Refusals are grouped per clock minute: the requests may straddle one on a loaded machine.
        let firstMinute = Int(Date().timeIntervalSince1970 / 60)
        for asking in crowd {
            #expect(try await Device().request(key.id, app: asking, on: server).errorCode == "other_team")
        }
        let minutes = Int(Date().timeIntervalSince1970 / 60) - firstMinute + 1
        // The victim's own refusal (a credential rotated away) still has its row.
        #expect(try await world.admin.call("POST", "/v1/teams/Victim/apps/\(app.id)/credential").status == 200)
        #expect(try await Device().request(key.id, app: app, on: server).errorCode == "credential_revoked")
        let rows = try await AuditRecord.query(on: server.app.db).filter(\.$action == "key.deliver").all()
        #expect((1...minutes).contains(rows.filter { $0.reason == "other_team" }.count), "\(minutes) minute(s): \(rows.map { $0.reason ?? "" })")
        #expect(rows.contains { $0.reason == "credential_revoked" }, "\(rows.map { $0.reason ?? "" })")
        #expect(!(try await AuditRecord.query(on: server.app.db).all()).contains { $0.action == "audit.suppressed" })
    }
}
