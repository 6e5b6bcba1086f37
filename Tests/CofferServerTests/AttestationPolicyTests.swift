@testable import CofferServer
import CofferFormat
import Crypto
import Fluent
import SQLKit
import Foundation
import Testing

/// Issue 17 over HTTP, the parts that need no evidence: setting an app's policy, refusing key
/// requests that carry none, the challenge route, and apps with policy `none` unchanged.
@Suite("Attestation policy")
struct AttestationPolicyTests {
    nonisolated(unsafe) static let apple: [String: Any] = ["policy": "apple-app-attest", "appleTeamID": "ABCDE12345"]
    nonisolated(unsafe) static let android: [String: Any] = [
        "policy": "android-key-attestation", "packageName": "com.example.demo",
        "signingCertificateDigests": [String(repeating: "AB:", count: 31) + "CD"], "minimumSecurityLevel": "strongbox",
    ]

    @Test("the API sets, shows and checks an app's policy, and audits the change")
    func policyThroughTheAPI() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let created = try await world.admin.call("POST", "/v1/teams/T/apps", json: [
            "name": "Cam", "platform": "ios", "bundleID": "com.example.cam", "attestation": Self.apple])
        #expect(created.status == 201, "\(created.text)")
        let policy = created.object["attestation"] as? [String: Any] ?? [:]
        #expect(policy["policy"] as? String == "apple-app-attest")
        #expect(policy["bundleID"] as? String == "com.example.cam")
        #expect(policy["appleEnvironment"] as? String == "production")
        let id = created.object["id"] as? String ?? ""

        let changed = try await world.admin.call("PATCH", "/v1/teams/T/apps/\(id)", json: ["attestation": Self.android])
        #expect(changed.status == 200, "\(changed.text)")
        let androidPolicy = changed.object["attestation"] as? [String: Any] ?? [:]
        #expect(androidPolicy["signingCertificateDigests"] as? [String] == [String(repeating: "ab", count: 31) + "cd"])
        #expect(androidPolicy["appleTeamID"] == nil)
        let listed = try await world.admin.call("GET", "/v1/teams/T/apps")
        #expect((listed.array.first?["attestation"] as? [String: Any])?["policy"] as? String == "android-key-attestation")

        for bad: [String: Any] in [
            ["policy": "apple-app-attest"], ["policy": "apple-app-attest", "appleTeamID": "abcde12345"],
            ["policy": "apple-app-attest", "appleTeamID": "ABCDE12345", "appleEnvironment": "staging"],
            ["policy": "android-key-attestation", "packageName": "com.x"],
            ["policy": "android-key-attestation", "packageName": "com.x", "signingCertificateDigests": ["00"]],
            ["policy": "android-key-attestation", "packageName": "com.x", "signingCertificateDigests": [String(repeating: "zz", count: 32)]],
            ["policy": "android-key-attestation", "packageName": "com x", "signingCertificateDigests": [String(repeating: "00", count: 32)]],
            ["policy": "android-key-attestation", "packageName": "com.x", "signingCertificateDigests": [String(repeating: "00", count: 32)],
             "minimumSecurityLevel": "hardware"],
        ] {
            let refused = try await world.admin.call("PATCH", "/v1/teams/T/apps/\(id)", json: ["attestation": bad])
            #expect(refused.status == 400, "\(bad): \(refused.text)")
        }
        #expect(try await world.admin.call("PATCH", "/v1/teams/T/apps/\(id)", json: [:]).status == 400)
        // Unchanged by the refusals.
        let after = try await world.admin.call("GET", "/v1/teams/T/apps")
        #expect((after.array.first?["attestation"] as? [String: Any])?["packageName"] as? String == "com.example.demo")
        let audit = try await world.admin.call("GET", "/v1/teams/T/audit")
        #expect(audit.array.contains { ($0["target"] as? String ?? "").contains("attestation: android-key-attestation com.example.demo") })
        // A viewer cannot change it.
        let viewer = try await world.member("vi", role: "viewer", in: "T")
        #expect(try await viewer.call("PATCH", "/v1/teams/T/apps/\(id)", json: ["attestation": ["policy": "none"]]).status == 403)
    }

    @Test("an attesting app's key request without evidence is refused, audited and counted; policy none delivers as before", arguments: Backend.allCases)
    func evidenceRequired(_ backend: Backend) async throws {
        guard !backend.isPostgres || TestServer.postgresURL != nil else { return }
        let server = try await TestServer.start(postgres: backend.isPostgres)
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let plain = try await world.app(in: "T", name: "plain")
        let attesting = try await world.app(in: "T", name: "attesting")
        #expect(try await world.admin.call("PATCH", "/v1/teams/T/apps/\(attesting.id)", json: ["attestation": Self.apple]).status == 200)
        let key = try await world.key(in: "T")
        try await world.release(key, in: "T", to: [plain.id, attesting.id])

        let device = Device()
        let delivered = try await device.request(key.id, app: plain, on: server)
        #expect(delivered.status == 200, "\(delivered.text)")
        #expect(try device.open(delivered, keyID: key.id) == key.key)

        let refused = try await device.request(key.id, app: attesting, on: server)
        #expect(refused.status == 403)
        #expect(refused.errorCode == "attestation_required")
        #expect(refused.text.contains("apple-app-attest"))
        #expect(refused.object["ciphertext"] == nil)

        // Evidence of the wrong format, and an attestation with a challenge the server never gave.
        let wrongFormat = try await Self.request(key.id, device: device, app: attesting, evidence: ["format": "android-key-attestation"], on: server)
        #expect(wrongFormat.errorCode == "attestation_invalid")
        let madeUp = try await Self.request(key.id, device: device, app: attesting, evidence: [
            "format": "apple-app-attest", "keyID": Data(repeating: 1, count: 32).base64EncodedString(),
            "challenge": Data(repeating: 2, count: 32).base64EncodedString(), "attestationObject": Data([0xA0]).base64EncodedString(),
        ], on: server)
        #expect(madeUp.errorCode == "attestation_challenge_invalid")
        // An assertion by a key this app never attested.
        let unknown = try await Self.request(key.id, device: device, app: attesting, evidence: [
            "format": "apple-app-attest", "keyID": Data(repeating: 3, count: 32).base64EncodedString(),
            "assertion": Data([0xA0]).base64EncodedString(),
        ], on: server)
        #expect(unknown.errorCode == "attestation_unknown_key")
        // Oversized evidence is refused before it is decoded.
        let huge = try await Self.request(key.id, device: device, app: attesting, evidence: [
            "format": "apple-app-attest", "keyID": Data(repeating: 3, count: 32).base64EncodedString(),
            "assertion": Data(repeating: 0, count: 40_000).base64EncodedString(),
        ], on: server)
        #expect(huge.errorCode == "attestation_invalid")

        try await server.app.refusals!.flush(on: server.app.db)
        let reasons = Set(try await server.app.db.query(AuditRecord.self).filter(\.$outcome == "refused").all().compactMap(\.reason))
        #expect(reasons.isSuperset(of: ["attestation_required", "attestation_invalid", "attestation_challenge_invalid", "attestation_unknown_key"]))
        let metrics = String(decoding: try await HTTP(base: server.base).call("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("coffer_attestations_total{format=\"apple-app-attest\",outcome=\"attestation_required\"} 1"))
        #expect(metrics.contains("coffer_key_deliveries_total{outcome=\"attestation_required\"} 1"))

        // Back to none: the same request is delivered again.
        #expect(try await world.admin.call("PATCH", "/v1/teams/T/apps/\(attesting.id)", json: ["attestation": ["policy": "none"]]).status == 200)
        #expect(try await device.request(key.id, app: attesting, on: server).status == 200)
    }

    @Test("challenges: only for attesting apps, only with the app's credential; made without a write and without the app's budget; taken once, as a hash")
    func challenges() async throws {
        let server = try await TestServer.start { $0.deliveriesPerAppPerMinute = 3; $0.deviceRequestsPerAddressPerMinute = 8; $0.trustedProxies = "127.0.0.1, ::1" }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let plain = try await world.app(in: "T", name: "plain")
        let attesting = try await world.app(in: "T", name: "attesting")
        #expect(try await world.admin.call("PATCH", "/v1/teams/T/apps/\(attesting.id)", json: ["attestation": Self.apple]).status == 200)
        let client = HTTP(base: server.base)
        let path = "/v1/device/attestation/challenge"

        #expect(try await client.call("POST", path, json: ["appID": plain.id, "credential": plain.credential]).status == 409)
        #expect(try await client.call("POST", path, json: ["appID": attesting.id, "credential": "cfa_wrong"]).status == 401)
        let first = try await client.call("POST", path, json: ["appID": attesting.id, "credential": attesting.credential])
        #expect(first.status == 201, "\(first.text)")
        let challenge = Data(base64Encoded: first.object["challenge"] as? String ?? "") ?? Data()
        #expect(challenge.count == 32)
        #expect(first.object["expiresAt"] is String)
        // Nothing is written when a challenge is made.
        struct Row: Decodable { let challenge_hash: String }
        let table = "SELECT challenge_hash FROM attestation_challenges"
        #expect(try await (server.app.db as! any SQLDatabase).raw(SQLQueryString(table)).all(decoding: Row.self).isEmpty)
        // One address (the holder of an extracted credential) is bounded by its own budget (8 a
        // minute here), not the app's (3): another address still gets challenges.
        var statuses: [Int] = []
        for _ in 0..<8 {
            statuses.append(try await client.call("POST", path, json: ["appID": attesting.id, "credential": attesting.credential],
                                                  headers: ["X-Forwarded-For": "203.0.113.5"]).status)
        }
        #expect(statuses == Array(repeating: 201, count: 8) , "\(statuses)")
        #expect(try await client.call("POST", path, json: ["appID": attesting.id, "credential": attesting.credential],
                                      headers: ["X-Forwarded-For": "203.0.113.5"]).status == 429)
        #expect(try await client.call("POST", path, json: ["appID": attesting.id, "credential": attesting.credential],
                                      headers: ["X-Forwarded-For": "198.51.100.5"]).status == 201)
        #expect(try await (server.app.db as! any SQLDatabase).raw(SQLQueryString(table)).all(decoding: Row.self).isEmpty)
        // Taken once, by inserting its hash (never the challenge itself).
        let appID = try #require(UUID(uuidString: attesting.id))
        let challenges = try #require(server.app.attestationChallenges)
        #expect(try await challenges.consume(Array(challenge), for: appID, on: server.app.db))
        #expect(try await !challenges.consume(Array(challenge), for: appID, on: server.app.db))
        #expect(try await !challenges.consume(Array(challenge), for: try #require(UUID(uuidString: plain.id)), on: server.app.db))
        let rows = try await (server.app.db as! any SQLDatabase).raw(SQLQueryString(table)).all(decoding: Row.self)
        #expect(rows.map(\.challenge_hash) == [SHA256.hash(data: challenge).hexString])
        // A rotated-away credential is refused (403) without touching the budget or the table.
        #expect(try await world.admin.call("POST", "/v1/teams/T/apps/\(attesting.id)/credential").status == 200)
        #expect(try await client.call("POST", path, json: ["appID": attesting.id, "credential": attesting.credential]).status == 403)
    }

    /// A challenge for `app` from the server (201 expected).
    static func challenge(for app: (id: String, credential: String), on server: TestServer) async throws -> [UInt8] {
        let reply = try await HTTP(base: server.base).call("POST", "/v1/device/attestation/challenge",
                                                          json: ["appID": app.id, "credential": app.credential])
        #expect(reply.status == 201, "\(reply.text)")
        return Array(Data(base64Encoded: reply.object["challenge"] as? String ?? "") ?? Data())
    }

    /// A key request with `evidence` as its `attestation`.
    static func request(_ keyID: String, device: Device, app: (id: String, credential: String), evidence: [String: Any],
                        on server: TestServer) async throws -> HTTP.Reply {
        try await HTTP(base: server.base).call("POST", "/v1/device/keys/\(keyID)", json: [
            "appID": app.id, "credential": app.credential, "deviceID": device.id,
            "devicePublicKey": device.privateKey.publicKey.rawRepresentation.base64EncodedString(), "attestation": evidence,
        ])
    }
}
