import CofferFormat
import Crypto
import Foundation
import Testing

@testable import CofferServer

/// Wrong app credentials on the manifest route: each costs the client's address one failure of
/// the budget failed API tokens spend (COFFER_AUTH_FAILURES_PER_ADDRESS_PER_MINUTE), and past it a
/// request the cache cannot vouch for is answered 429 before any look-up — before, every wrong
/// credential or made-up app ID cost one or two database queries, without limit, from anyone.
@Suite("Wrong app credentials on the device routes")
struct ManifestCredentialFailureTests {
    /// The first answer's status and the text of a manifest request with these credentials, on
    /// a connection of its own.
    static func manifest(port: Int, appID: String, credential: String) async throws -> (status: Int, text: String) {
        let authorization = "Basic " + Data("\(appID):\(credential)".utf8).base64EncodedString()
        let connection = try await RawConnection.connect(port: port)
        defer { Task { await connection.close() } }
        try await connection.send("GET /v1/device/collections/FlowerModels/manifest?deviceID=d HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                  + "Authorization: \(authorization)\r\nConnection: close\r\n\r\n")
        let (text, _) = try await connection.wait { !RawConnection.statuses($0).isEmpty && $0.contains("\r\n\r\n") }
        return (RawConnection.statuses(text).first ?? 0, text)
    }

    /// A server whose addresses may fail 3 times a minute, with an active deployment; the port of
    /// `which` ("main port" or "device port").
    static func start(port which: String) async throws -> (server: TestServer, port: Int, flowers: Flowers) {
        let server = try await TestServer.start {
            $0.devicePort = 0
            $0.authFailuresPerAddressPerMinute = 3
        }
        let port = which == "device port" ? try #require(server.app.storage[DeviceListener.Key.self]?.port) : server.base.port!
        let flowers = try await Flowers.make(server)
        _ = try await flowers.activatedDeployment()
        return (server, port, flowers)
    }

    @Test("past an address's failure budget: 429 with Retry-After for wrong credentials and unknown apps; the right credential still gets its manifest",
          arguments: ["main port", "device port"])
    func failureBudget(port which: String) async throws {
        let (server, port, flowers) = try await Self.start(port: which)
        defer { Task { try? await server.stop() } }

        func get(_ appID: String, _ credential: String) async throws -> (status: Int, text: String) {
            try await Self.manifest(port: port, appID: appID, credential: credential)
        }
        let app = "\(flowers.app.id)", right = flowers.app.credential
        #expect(try await get(app, right).status == 200)
        for attempt in 1...3 {
            #expect(try await get(app, right + "x").status == 401, "wrong credential \(attempt)")
        }
        let refused = try await get(app, right + "x")
        #expect(refused.status == 429, "\(refused.text.prefix(300))")
        #expect(refused.text.lowercased().contains("retry-after: "), "\(refused.text.prefix(300))")
        #expect(try await get(UUID().uuidString, "anything").status == 429, "an unknown app, past the budget")
        #expect(!refused.text.contains(right), "the credential is not echoed")
        // The cached row is no longer fresh (a second), so this goes the slow way; the cache still
        // vouches for the right credential, so the address's budget does not stop it.
        try await Task.sleep(nanoseconds: 1_200_000_000)
        #expect(try await get(app, right).status == 200)
    }

    @Test("a rotated-away credential is refused 403 without spending the address's failure budget, on both ports",
          arguments: ["main port", "device port"])
    func rotatedAwayLeavesTheBudget(port which: String) async throws {
        let (server, port, flowers) = try await Self.start(port: which)
        defer { Task { try? await server.stop() } }
        let rotated = try await flowers.admin.call("POST", "/v1/teams/T/apps/\(flowers.app.id)/credential")
        let current = try #require(rotated.object["credential"] as? String)
        #expect(try await Self.manifest(port: port, appID: flowers.app.id, credential: current).status == 200)
        // Old installs behind one carrier NAT keep their rotated-away credential until they update:
        // they get the final 403, and do not use up the budget every app behind that address shares.
        for attempt in 1...5 {
            let reply = try await Self.manifest(port: port, appID: flowers.app.id, credential: flowers.app.credential)
            #expect(reply.status == 403 && reply.text.contains("credential_revoked"), "rotated-away credential \(attempt): \(reply.text.prefix(200))")
        }
        for attempt in 1...3 {
            #expect(try await Self.manifest(port: port, appID: flowers.app.id, credential: current + "x").status == 401, "wrong credential \(attempt)")
        }
        #expect(try await Self.manifest(port: port, appID: flowers.app.id, credential: current + "x").status == 429, "the budget is the wrong credentials'")
    }

    @Test("reports, key requests and attestation challenges spend the same budget: past it 429 before any look-up, a right credential still reports")
    func otherRoutes() async throws {
        let server = try await TestServer.start { $0.authFailuresPerAddressPerMinute = 4 }
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        _ = try await flowers.activatedDeployment()
        let fleet = Fleet(flowers, size: 1)
        let manifest = try #require(try await fleet.manifests()["device-0"])
        let http = HTTP(base: server.base)
        let (app, right) = ("\(flowers.app.id)", flowers.app.credential)
        func report(_ credential: String, appID: String? = nil) async throws -> HTTP.Reply {
            try await fleet.report([Fleet.event(manifest, device: "device-0", outcome: "loaded")], app: (appID ?? app, credential))
        }
        func key(_ credential: String) async throws -> HTTP.Reply {
            try await http.call("POST", "/v1/device/keys/\(manifest.models["FlowerClassifier"]?.keyID ?? "")", json: [
                "appID": app, "credential": credential, "deviceID": "device-0",
                "devicePublicKey": Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation.base64EncodedString(),
            ])
        }
        func challenge(_ credential: String) async throws -> HTTP.Reply {
            try await http.call("POST", "/v1/device/attestation/challenge", json: ["appID": app, "credential": credential])
        }
        #expect(try await report(right).status == 200)
        // Four wrong credentials, one route after another: the budget is the address's, not a route's.
        #expect(try await report(right + "x").status == 401)
        #expect(try await report("anything", appID: UUID().uuidString).status == 401)
        #expect(try await key(right + "x").status == 401)
        #expect(try await challenge(right + "x").status == 401)
        for (route, reply) in [("report", try await report(right + "x")), ("key", try await key(right + "x")),
                               ("challenge", try await challenge(right + "x"))] {
            #expect(reply.status == 429, "\(route): \(reply.text.prefix(200))")
            #expect(reply.header("Retry-After") != nil, "\(route)")
            #expect(!reply.text.contains(right), "\(route): the credential is not echoed")
        }
        #expect(try await report("anything", appID: UUID().uuidString).status == 429, "an unknown app, past the budget")
        // The right credential, vouched for by the cache, still reports and gets its key.
        #expect(try await report(right).status == 200)
        #expect(try await key(right).status == 200)
    }
}
