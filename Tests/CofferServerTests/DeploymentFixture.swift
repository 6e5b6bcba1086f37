import CofferFormat
import Crypto
import Foundation
import Testing

/// The WWDC 2020 set-up through the real API: team T, an app, a model key, collection
/// FlowerModels (FlowerClassifier, FlowerStylizer), and sealed models uploaded on demand.
struct Flowers {
    let world: World
    let app: (id: String, credential: String)
    let key: ModelKey
    var admin: HTTP { world.admin }
    var server: TestServer { world.server }
    static let base = "/v1/teams/T/collections/FlowerModels"

    static func make(_ server: TestServer) async throws -> Flowers {
        let world = World(server)
        try await world.team("T")
        let app = try await world.app(in: "T")
        let key = try await world.key(in: "T")
        let created = try await world.admin.call("POST", "/v1/teams/T/collections", json: [
            "identifier": "FlowerModels", "description": "flowers", "models": ["FlowerClassifier", "FlowerStylizer"]])
        #expect(created.status == 201, "\(created.text)")
        try await world.bind(app.id, in: "T", to: ["FlowerModels"])
        return Flowers(world: world, app: app, key: key)
    }

    /// Seals `label` as a model with the team's key, uploads it, returns its address.
    func upload(_ label: String, key: ModelKey? = nil, team: String = "T") async throws -> String {
        let sealed = Data(try SealedModel.seal(Array("model \(label)".utf8), name: label, using: .modelKey(key ?? self.key)))
        let reply = try await admin.call("PUT", "/v1/teams/\(team)/blobs/\(sealed.sha256Hex)", body: sealed)
        #expect(reply.status == 201 || reply.status == 200, "\(reply.text)")
        return sealed.sha256Hex
    }

    /// Creates a draft; returns its ID (nil when refused) and the reply.
    @discardableResult
    func deployment(_ name: String, models: [String: String], rules: [[String: Any]] = []) async throws -> (id: String?, reply: HTTP.Reply) {
        let reply = try await admin.call("POST", Self.base + "/deployments", json: ["name": name, "models": models, "rules": rules])
        return (reply.object["id"] as? String, reply)
    }

    func activate(_ id: String) async throws -> HTTP.Reply {
        try await admin.call("POST", Self.base + "/deployments/\(id)/activate")
    }

    /// Uploads a classifier and a stylizer, makes deployment `name` of them and activates it; its ID.
    func activatedDeployment(_ name: String = "v1") async throws -> String {
        let models = ["FlowerClassifier": try await upload("c"), "FlowerStylizer": try await upload("s")]
        let id = try #require(try await deployment(name, models: models).id)
        let activated = try await activate(id)
        #expect(activated.status == 200, "\(activated.status)")
        return id
    }

    /// The manifest a device with `attributes` gets (HTTP Basic with the app's credential).
    func manifest(_ attributes: [String: String], app: (id: String, credential: String)? = nil, etag: String? = nil,
                  collection: String = "FlowerModels", base: URL? = nil) async throws -> HTTP.Reply {
        let (id, credential) = app ?? self.app
        var query = URLComponents()
        query.queryItems = attributes.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        var headers = ["Authorization": "Basic " + Data("\(id):\(credential)".utf8).base64EncodedString()]
        if let etag { headers["If-None-Match"] = etag }
        return try await HTTP(base: base ?? server.base).call("GET", "/v1/device/collections/\(collection)/manifest?" + (query.percentEncodedQuery ?? ""),
                                                      headers: headers)
    }

    /// The server's signing key, as `GET /v1/signing-key` gives it.
    func signingKey() async throws -> Curve25519.Signing.PublicKey {
        let reply = try await HTTP(base: server.base).call("GET", "/v1/signing-key")
        return try Curve25519.Signing.PublicKey(rawRepresentation: Data(base64Encoded: reply.object["publicKey"] as? String ?? "") ?? Data())
    }

    /// Fetches and verifies a device's manifest.
    func verifiedManifest(_ attributes: [String: String]) async throws -> Manifest {
        let reply = try await manifest(attributes)
        #expect(reply.status == 200, "\(reply.text)")
        return try SignedManifest.verify(reply.body, using: try await signingKey())
    }
}

extension HTTP.Reply {
    /// The body as text, for failure messages.
    var text: String { String(decoding: body.prefix(500), as: UTF8.self) }
}
