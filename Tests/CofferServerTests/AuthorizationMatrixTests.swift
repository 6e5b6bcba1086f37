import CofferFormat
import Crypto
import Foundation
import Testing
import Vapor

/// Every route × every kind of caller, from one table: a route added to the server but not to the
/// table fails `tableCoversEveryRoute`, so no route can escape the matrix.
@Suite("Authorization matrix")
struct AuthorizationMatrixTests {
    enum Access: Equatable { case everyone, anyUser, viewer, developer, owner, device }
    enum Actor: String, CaseIterable { case nobody, deviceCredential, otherTeam, viewer, developer, owner }

    struct Call { var method: String; var path: String; var json: Any? = nil; var body: Data? = nil; var headers: [String: String] = [:] }

    struct Route {
        let method: String
        let path: String
        let access: Access
        let success: Int
        /// Makes a fresh, valid request for `actor` (fixtures are created as the team's owner).
        let make: @Sendable (Setup, Actor) async throws -> Call
    }

    /// Team "M" with an owner (admin), a developer and a viewer; team "X" with its own owner;
    /// an app of M whose credential plays the device.
    struct Setup: @unchecked Sendable {
        let world: World
        let clients: [Actor: HTTP]
        let app: (id: String, credential: String)
        let key: ModelKey
        let blob: String
        /// An active deployment of collection C (model A) in team M, with an earlier one to roll back to.
        let deployment: String

        static let collection = "/v1/teams/M/collections/C"
        /// A collection whose model names the matrix adds and removes (C's deployments stay complete).
        static let names = "/v1/teams/M/collections/N"

        static func make(_ server: TestServer) async throws -> Setup {
            let world = World(server)
            try await world.team("M")
            let developer = try await world.member("dev", role: "developer", in: "M")
            let viewer = try await world.member("view", role: "viewer", in: "M")
            let outsider = try await world.member("xo", role: "viewer", in: "M")
            #expect(try await outsider.call("POST", "/v1/teams", json: ["name": "X"]).status == 201)
            #expect(try await world.admin.call("DELETE", "/v1/teams/M/members/xo").status == 204)
            let key = try await world.key(in: "M")
            let blob = try await Self.uploadBlob(world, key: key)
            #expect(try await world.admin.call("POST", "/v1/teams/M/collections", json: ["identifier": "C", "models": ["A"]]).status == 201)
            #expect(try await world.admin.call("POST", "/v1/teams/M/collections", json: ["identifier": "N", "models": ["A"]]).status == 201)
            let app = try await world.app(in: "M", collections: ["C"])
            let first = try await world.admin.call("POST", collection + "/deployments", json: ["name": "first", "models": ["A": blob]])
            let deployment = try #require(first.object["id"] as? String)
            #expect(try await world.admin.call("POST", collection + "/deployments/\(deployment)/activate").status == 200)
            let second = try await world.admin.call("POST", collection + "/deployments/\(deployment)/clone", json: ["name": "second"])
            #expect(try await world.admin.call("POST", collection + "/deployments/\(second.object["id"] as? String ?? "")/activate").status == 200)
            let none = HTTP(base: server.base, token: nil)
            let device = HTTP(base: server.base, token: app.credential)
            return Setup(world: world, clients: [.nobody: none, .deviceCredential: device, .otherTeam: outsider,
                                                 .viewer: viewer, .developer: developer, .owner: world.admin],
                         app: app, key: key, blob: blob, deployment: deployment)
        }

        /// A fresh deployment of collection C in a staged rollout (10 %, then 100 %), made by the
        /// owner: a draft activated at once first (which ends any rollout left running), then another staged.
        func staged() async throws -> String {
            let from = try await draft()
            #expect(try await world.admin.call("POST", Self.collection + "/deployments/\(from)/activate").status == 200)
            let staged = try await draft()
            let reply = try await world.admin.call("POST", Self.collection + "/deployments/\(staged)/activate", json: ["stages": [10, 100]])
            #expect(reply.status == 200, "\(reply.text)")
            return staged
        }

        /// A fresh draft of collection C, made by the owner.
        func draft() async throws -> String {
            let reply = try await world.admin.call("POST", Self.collection + "/deployments", json: ["name": "draft-\(UUID().uuidString.prefix(8))", "models": ["A": blob]])
            return try #require(reply.object["id"] as? String)
        }

        static func uploadBlob(_ world: World, key: ModelKey) async throws -> String {
            let sealed = Data(try SealedModel.seal(Array(UUID().uuidString.utf8), name: "m", using: .modelKey(key)))
            let address = sealed.sha256Hex
            let reply = try await world.admin.call("PUT", "/v1/teams/M/blobs/\(address)", body: sealed)
            #expect(reply.status == 201)
            return address
        }
    }

    static let routes: [Route] = [
        // 303 to the dashboard, whose sign-in page answers (HTTP follows redirects).
        Route(method: "GET", path: "/", access: .everyone, success: 200) { _, _ in Call(method: "GET", path: "/") },
        Route(method: "GET", path: "/healthz", access: .everyone, success: 200) { _, _ in Call(method: "GET", path: "/healthz") },
        Route(method: "GET", path: "/metrics", access: .everyone, success: 200) { _, _ in Call(method: "GET", path: "/metrics") },
        Route(method: "GET", path: "/openapi.json", access: .everyone, success: 200) { _, _ in Call(method: "GET", path: "/openapi.json") },
        Route(method: "GET", path: "/v1/blobs/{sha256}", access: .everyone, success: 200) { s, _ in Call(method: "GET", path: "/v1/blobs/\(s.blob)") },
        Route(method: "HEAD", path: "/v1/blobs/{sha256}", access: .everyone, success: 200) { s, _ in Call(method: "HEAD", path: "/v1/blobs/\(s.blob)") },
        Route(method: "POST", path: "/v1/device/keys/{key}", access: .device, success: 200) { s, actor in
            Call(method: "POST", path: "/v1/device/keys/\(s.key.id)", json: [
                "appID": s.app.id, "credential": actor == .deviceCredential ? s.app.credential : "cfa_not-this-one",
                "deviceID": "matrix-\(UUID().uuidString)", "devicePublicKey": Device().privateKey.publicKey.rawRepresentation.base64EncodedString(),
            ])
        },
        Route(method: "POST", path: "/v1/device/attestation/challenge", access: .device, success: 201) { s, actor in
            // An app that asks for attestation (an app with policy none is answered 409).
            let made = try await s.world.admin.call("POST", "/v1/teams/M/apps", json: [
                "name": "attesting", "platform": "ios", "bundleID": "com.example.demo",
                "attestation": ["policy": "apple-app-attest", "appleTeamID": "ABCDE12345"]])
            let id = made.object["id"] as? String ?? "", credential = made.object["credential"] as? String ?? ""
            return Call(method: "POST", path: "/v1/device/attestation/challenge",
                        json: ["appID": id, "credential": actor == .deviceCredential ? credential : "cfa_not-this-one"])
        },
        Route(method: "POST", path: "/v1/device/reports", access: .device, success: 200) { s, actor in
            let credential = actor == .deviceCredential ? s.app.credential : "cfa_not-this-one"
            let event: [String: Any] = [
                "id": UUID().uuidString, "deviceID": "matrix", "collection": "C", "sequence": 1, "deployment": s.deployment,
                "model": "A", "sha256": s.blob, "outcome": "loaded", "at": ISO8601DateFormatter().string(from: Date()),
            ]
            return Call(method: "POST", path: "/v1/device/reports", json: ["events": [event]],
                        headers: ["Authorization": "Basic " + Data("\(s.app.id):\(credential)".utf8).base64EncodedString()])
        },
        Route(method: "POST", path: "/v1/teams", access: .anyUser, success: 201) { _, _ in
            Call(method: "POST", path: "/v1/teams", json: ["name": "t-\(UUID().uuidString.prefix(8))"])
        },
        Route(method: "GET", path: "/v1/teams", access: .anyUser, success: 200) { _, _ in Call(method: "GET", path: "/v1/teams") },
        Route(method: "POST", path: "/v1/tokens", access: .anyUser, success: 201) { _, _ in Call(method: "POST", path: "/v1/tokens", json: ["name": "ci"]) },
        Route(method: "GET", path: "/v1/tokens", access: .anyUser, success: 200) { _, _ in Call(method: "GET", path: "/v1/tokens") },
        Route(method: "DELETE", path: "/v1/tokens/{token}", access: .anyUser, success: 204) { s, actor in
            // The caller's own token: made by the caller when it can, else any ID.
            let client = s.clients[actor]!
            let made = client.token == nil ? nil : try await client.call("POST", "/v1/tokens", json: ["name": "doomed"]).object["id"] as? String
            return Call(method: "DELETE", path: "/v1/tokens/\(made ?? UUID().uuidString)")
        },
        Route(method: "GET", path: "/v1/teams/{team}/members", access: .viewer, success: 200) { _, _ in Call(method: "GET", path: "/v1/teams/M/members") },
        Route(method: "POST", path: "/v1/teams/{team}/members", access: .owner, success: 201) { _, _ in
            Call(method: "POST", path: "/v1/teams/M/members", json: ["name": "u-\(UUID().uuidString.prefix(8))", "role": "viewer"])
        },
        Route(method: "DELETE", path: "/v1/teams/{team}/members/{member}", access: .owner, success: 204) { s, _ in
            let name = "gone-\(UUID().uuidString.prefix(8))"
            _ = try await s.world.member(name, role: "viewer", in: "M")
            return Call(method: "DELETE", path: "/v1/teams/M/members/\(name)")
        },
        Route(method: "POST", path: "/v1/teams/{team}/invitations", access: .owner, success: 201) { _, _ in
            Call(method: "POST", path: "/v1/teams/M/invitations", json: ["role": "viewer", "note": "matrix"])
        },
        Route(method: "GET", path: "/v1/teams/{team}/invitations", access: .owner, success: 200) { _, _ in Call(method: "GET", path: "/v1/teams/M/invitations") },
        Route(method: "DELETE", path: "/v1/teams/{team}/invitations/{invitation}", access: .owner, success: 204) { s, _ in
            let made = try await s.world.admin.call("POST", "/v1/teams/M/invitations", json: ["role": "viewer"])
            return Call(method: "DELETE", path: "/v1/teams/M/invitations/\(made.object["id"] as? String ?? "")")
        },
        Route(method: "POST", path: "/v1/invitations/accept", access: .anyUser, success: 200) { s, actor in
            // An invitation to a fresh team the caller is not in: made by the developer for the
            // owner (who is in every team the admin makes), by the admin for everyone else.
            let inviter = actor == .owner ? s.clients[.developer]! : s.world.admin
            let team = "i-\(UUID().uuidString.prefix(8))"
            _ = try await inviter.call("POST", "/v1/teams", json: ["name": team])
            let code = try await s.world.invite(role: "viewer", to: team, by: inviter)
            return Call(method: "POST", path: "/v1/invitations/accept", json: ["code": code])
        },
        Route(method: "POST", path: "/v1/invitations/redeem", access: .everyone, success: 201) { s, _ in
            let code = try await s.world.invite(role: "viewer", to: "M")
            return Call(method: "POST", path: "/v1/invitations/redeem", json: ["code": code, "name": "r-\(UUID().uuidString.prefix(8))"])
        },
        Route(method: "PATCH", path: "/v1/teams/{team}/apps/{app}", access: .developer, success: 200) { s, _ in
            Call(method: "PATCH", path: "/v1/teams/M/apps/\(try await s.world.app(in: "M").id)", json: ["collections": ["C", "N"]])
        },
        Route(method: "POST", path: "/v1/teams/{team}/apps", access: .developer, success: 201) { _, _ in
            Call(method: "POST", path: "/v1/teams/M/apps", json: ["name": "A", "platform": "android"])
        },
        Route(method: "GET", path: "/v1/teams/{team}/apps", access: .viewer, success: 200) { _, _ in Call(method: "GET", path: "/v1/teams/M/apps") },
        Route(method: "POST", path: "/v1/teams/{team}/apps/{app}/credential", access: .developer, success: 200) { s, _ in
            Call(method: "POST", path: "/v1/teams/M/apps/\(try await s.world.app(in: "M").id)/credential")
        },
        Route(method: "DELETE", path: "/v1/teams/{team}/apps/{app}", access: .developer, success: 204) { s, _ in
            Call(method: "DELETE", path: "/v1/teams/M/apps/\(try await s.world.app(in: "M").id)")
        },
        Route(method: "POST", path: "/v1/teams/{team}/keys", access: .developer, success: 201) { _, _ in
            Call(method: "POST", path: "/v1/teams/M/keys", json: ["name": "k"])
        },
        Route(method: "GET", path: "/v1/teams/{team}/keys", access: .viewer, success: 200) { _, _ in Call(method: "GET", path: "/v1/teams/M/keys") },
        Route(method: "DELETE", path: "/v1/keys/{key}", access: .developer, success: 204) { s, _ in
            Call(method: "DELETE", path: "/v1/keys/\(try await s.world.key(in: "M").id)")
        },
        Route(method: "GET", path: "/v1/teams/{team}/audit", access: .viewer, success: 200) { _, _ in Call(method: "GET", path: "/v1/teams/M/audit") },
        Route(method: "PUT", path: "/v1/teams/{team}/blobs/{sha256}", access: .developer, success: 201) { s, _ in
            let sealed = Data(try SealedModel.seal(Array(UUID().uuidString.utf8), name: "m", using: .modelKey(s.key)))
            return Call(method: "PUT", path: "/v1/teams/M/blobs/\(sealed.sha256Hex)", body: sealed)
        },
        Route(method: "PUT", path: "/v1/teams/{team}/blobs/{sha256}/facts", access: .developer, success: 204) { s, _ in
            Call(method: "PUT", path: "/v1/teams/M/blobs/\(s.blob)/facts", json: ["format": "onnx", "size": 10, "notes": []])
        },
        Route(method: "GET", path: "/v1/signing-key", access: .everyone, success: 200) { _, _ in Call(method: "GET", path: "/v1/signing-key") },
        Route(method: "GET", path: "/v1/device/collections/{collection}/manifest", access: .device, success: 200) { s, actor in
            let credential = actor == .deviceCredential ? s.app.credential : "cfa_not-this-one"
            return Call(method: "GET", path: "/v1/device/collections/C/manifest?deviceID=matrix",
                        headers: ["Authorization": "Basic " + Data("\(s.app.id):\(credential)".utf8).base64EncodedString()])
        },
        Route(method: "GET", path: "/v1/collections", access: .anyUser, success: 200) { _, _ in Call(method: "GET", path: "/v1/collections") },
        Route(method: "POST", path: "/v1/teams/{team}/collections", access: .developer, success: 201) { _, _ in
            Call(method: "POST", path: "/v1/teams/M/collections", json: ["identifier": "c-\(UUID().uuidString.prefix(8))", "models": ["A"]])
        },
        Route(method: "GET", path: "/v1/teams/{team}/collections", access: .viewer, success: 200) { _, _ in Call(method: "GET", path: "/v1/teams/M/collections") },
        Route(method: "GET", path: "/v1/teams/{team}/collections/{collection}", access: .viewer, success: 200) { _, _ in
            Call(method: "GET", path: Setup.collection)
        },
        Route(method: "POST", path: "/v1/teams/{team}/collections/{collection}/models", access: .developer, success: 200) { _, _ in
            Call(method: "POST", path: Setup.names + "/models", json: ["name": "m-\(UUID().uuidString.prefix(8))"])
        },
        Route(method: "DELETE", path: "/v1/teams/{team}/collections/{collection}/models/{model}", access: .developer, success: 200) { s, _ in
            let name = "gone-\(UUID().uuidString.prefix(8))"
            _ = try await s.world.admin.call("POST", Setup.names + "/models", json: ["name": name])
            return Call(method: "DELETE", path: Setup.names + "/models/\(name)")
        },
        Route(method: "POST", path: "/v1/teams/{team}/collections/{collection}/deployments", access: .developer, success: 201) { s, _ in
            Call(method: "POST", path: Setup.collection + "/deployments", json: ["name": "d-\(UUID().uuidString.prefix(8))", "models": ["A": s.blob]])
        },
        Route(method: "GET", path: "/v1/teams/{team}/collections/{collection}/deployments", access: .viewer, success: 200) { _, _ in
            Call(method: "GET", path: Setup.collection + "/deployments")
        },
        Route(method: "GET", path: "/v1/teams/{team}/collections/{collection}/deployments/{deployment}", access: .viewer, success: 200) { s, _ in
            Call(method: "GET", path: Setup.collection + "/deployments/\(s.deployment)")
        },
        Route(method: "PATCH", path: "/v1/teams/{team}/collections/{collection}/deployments/{deployment}", access: .developer, success: 200) { s, _ in
            Call(method: "PATCH", path: Setup.collection + "/deployments/\(try await s.draft())", json: ["name": "e-\(UUID().uuidString.prefix(8))"])
        },
        Route(method: "POST", path: "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/clone", access: .developer, success: 201) { s, _ in
            Call(method: "POST", path: Setup.collection + "/deployments/\(s.deployment)/clone", json: ["name": "c-\(UUID().uuidString.prefix(8))"])
        },
        Route(method: "POST", path: "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/activate", access: .developer, success: 200) { s, _ in
            Call(method: "POST", path: Setup.collection + "/deployments/\(try await s.draft())/activate")
        },
        Route(method: "POST", path: "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/archive", access: .developer, success: 200) { s, _ in
            Call(method: "POST", path: Setup.collection + "/deployments/\(try await s.draft())/archive")
        },
        Route(method: "POST", path: "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/advance", access: .developer, success: 200) { s, _ in
            Call(method: "POST", path: Setup.collection + "/deployments/\(try await s.staged())/advance")
        },
        Route(method: "POST", path: "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/halt", access: .developer, success: 200) { s, _ in
            Call(method: "POST", path: Setup.collection + "/deployments/\(try await s.staged())/halt", json: ["reason": "matrix"])
        },
        Route(method: "GET", path: "/v1/teams/{team}/collections/{collection}/deployments/{deployment}/status", access: .viewer, success: 200) { s, _ in
            Call(method: "GET", path: Setup.collection + "/deployments/\(s.deployment)/status")
        },
        Route(method: "POST", path: "/v1/teams/{team}/collections/{collection}/rollback", access: .developer, success: 200) { _, _ in
            Call(method: "POST", path: Setup.collection + "/rollback")
        },
        Route(method: "GET", path: "/v1/teams/{team}/collections/{collection}/activations", access: .viewer, success: 200) { _, _ in
            Call(method: "GET", path: Setup.collection + "/activations")
        },
    ]

    /// What `actor` should get from a route with `access`.
    static func expected(_ route: Route, _ actor: Actor) -> Int {
        switch (route.access, actor) {
        case (.everyone, _): return route.success
        case (.device, .deviceCredential): return route.success
        case (.device, _): return 401
        case (_, .nobody), (_, .deviceCredential): return 401
        case (.anyUser, _): return route.success
        // Named by a key ID alone (found in any sealed model): outside its team the key is unknown,
        // so the answer names no team.
        case (_, .otherTeam) where route.path == "/v1/keys/{key}": return 404
        case (_, .otherTeam): return 403
        case (.viewer, _): return route.success
        case (.developer, .viewer): return 403
        case (.developer, _): return route.success
        case (.owner, .owner): return route.success
        case (.owner, _): return 403
        }
    }

    @Test("the table covers every registered route, and the OpenAPI document describes exactly those")
    func tableCoversEveryRoute() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let registered = Set(server.app.routes.all.map { route in
            route.method.rawValue + " /" + route.path.map { component -> String in
                if case .parameter(let name) = component { return "{\(name)}" }
                return "\(component)"
            }.joined(separator: "/")
        })
        let table = Set(Self.routes.map { "\($0.method) \($0.path)" } + Self.dashboardRoutes.map { "\($0.method) \($0.path)" })
        #expect(registered == table, "not in the table: \(registered.subtracting(table)); not registered: \(table.subtracting(registered))")
        #expect(Self.dashboardRoutes.allSatisfy { $0.path.hasPrefix("/dashboard") })

        let document = try await HTTP(base: server.base).call("GET", "/openapi.json").object
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = document["paths"] as? [String: [String: Any]] ?? [:]
        let described = Set(paths.flatMap { path, operations in operations.keys.map { "\($0.uppercased()) \(path)" } })
        // The OpenAPI document describes the JSON API; the HTML dashboard's prefix is left out, and only it.
        let api = registered.filter { !$0.split(separator: " ")[1].hasPrefix("/dashboard") }
        #expect(registered.count - api.count == Self.dashboardRoutes.count)
        #expect(described == api, "undocumented: \(api.subtracting(described)); documented but absent: \(described.subtracting(api))")
    }

    @Test("every route answers every kind of caller as the table says")
    func matrix() async throws {
        // Two kinds of caller send wrong tokens on every route: more than an address's default budget.
        let server = try await TestServer.start {
            $0.deliveriesPerDevicePerMinute = 1000
            $0.authFailuresPerAddressPerMinute = 10_000
        }
        defer { Task { try? await server.stop() } }
        let setup = try await Setup.make(server)
        for route in Self.routes {
            for actor in Actor.allCases {
                let call = try await route.make(setup, actor)
                let reply = try await setup.clients[actor]!.call(call.method, call.path, json: call.json, body: call.body, headers: call.headers)
                let want = Self.expected(route, actor)
                #expect(reply.status == want, "\(route.method) \(route.path) as \(actor.rawValue): \(reply.status), expected \(want) \(String(decoding: reply.body.prefix(200), as: UTF8.self))")
                if want == 401 || want == 403 {
                    #expect(reply.errorCode != nil, "\(route.method) \(route.path) as \(actor.rawValue): error body missing")
                }
            }
        }
    }
}

extension Data {
    var sha256Hex: String { SHA256.hash(data: self).map { String(format: "%02x", $0) }.joined() }
}
