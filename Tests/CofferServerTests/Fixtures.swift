import CofferFormat
import Crypto
import Foundation
import Testing

/// Teams, apps and keys made through the real API.
struct World {
    let server: TestServer
    let admin: HTTP

    init(_ server: TestServer) {
        self.server = server
        self.admin = HTTP(base: server.base, token: server.adminToken)
    }

    func team(_ name: String) async throws {
        let reply = try await admin.call("POST", "/v1/teams", json: ["name": name])
        #expect(reply.status == 201, "\(String(decoding: reply.body, as: UTF8.self))")
    }

    /// Creates an app bound to `collections`; returns its ID and credential.
    func app(in team: String, name: String = "Demo", collections: [String] = []) async throws -> (id: String, credential: String) {
        let reply = try await admin.call("POST", "/v1/teams/\(team)/apps", json: [
            "name": name, "platform": "ios", "bundleID": "com.example.demo", "collections": collections])
        #expect(reply.status == 201, "\(reply.text)")
        return (reply.object["id"] as! String, reply.object["credential"] as! String)
    }

    /// Binds an app to `collections` (replacing the ones it had).
    func bind(_ appID: String, in team: String, to collections: [String]) async throws {
        let reply = try await admin.call("PATCH", "/v1/teams/\(team)/apps/\(appID)", json: ["collections": collections])
        #expect(reply.status == 200, "\(reply.text)")
    }

    /// Makes `key` deliverable to `apps`: a collection of its own, a model sealed with the key, a
    /// deployment of it activated, and the apps bound to that collection (besides what they had).
    /// Returns the collection's identifier.
    @discardableResult
    func release(_ key: ModelKey, in team: String, to apps: [String]) async throws -> String {
        let identifier = "C" + key.id.prefix(12)
        let created = try await admin.call("POST", "/v1/teams/\(team)/collections", json: ["identifier": identifier, "description": "", "models": ["m"]])
        #expect(created.status == 201, "\(created.text)")
        let sealed = Data(try SealedModel.seal(Array("model of \(key.id)".utf8), name: "m", using: .modelKey(key)))
        let address = sealed.sha256Hex
        let upload = try await admin.call("PUT", "/v1/teams/\(team)/blobs/\(address)", body: sealed)
        #expect(upload.status == 201 || upload.status == 200, "\(upload.text)")
        let base = "/v1/teams/\(team)/collections/\(identifier)/deployments"
        let draft = try await admin.call("POST", base, json: ["name": "release", "models": ["m": address]])
        #expect(draft.status == 201, "\(draft.text)")
        let activated = try await admin.call("POST", base + "/\(draft.object["id"] as? String ?? "")/activate")
        #expect(activated.status == 200, "\(activated.text)")
        let list = try await admin.call("GET", "/v1/teams/\(team)/apps")
        for app in apps {
            let had = list.array.first { $0["id"] as? String == app }?["collections"] as? [String] ?? []
            try await bind(app, in: team, to: had + [identifier])
        }
        return identifier
    }

    /// Creates a model key; returns the `.modelkey` file contents parsed.
    func key(in team: String, name: String = "clf") async throws -> ModelKey {
        let reply = try await admin.call("POST", "/v1/teams/\(team)/keys", json: ["name": name])
        #expect(reply.status == 201)
        #expect(reply.header("Cache-Control") == "no-store")
        return try ModelKey(fileRepresentation: reply.body)
    }

    /// A user with `role` in `team`, invited by the admin and making their own account with the
    /// invitation; returns an HTTP client with that user's first token.
    func member(_ name: String, role: String, in team: String) async throws -> HTTP {
        let code = try await invite(role: role, to: team, note: name)
        let redeemed = try await HTTP(base: server.base).call("POST", "/v1/invitations/redeem", json: ["code": code, "name": name])
        #expect(redeemed.status == 201, "\(redeemed.text)")
        return HTTP(base: server.base, token: redeemed.object["token"] as? String)
    }

    /// An invitation to `team` made by the admin; returns its code.
    func invite(role: String, to team: String, note: String = "", by owner: HTTP? = nil) async throws -> String {
        let reply = try await (owner ?? admin).call("POST", "/v1/teams/\(team)/invitations", json: ["role": role, "note": note])
        #expect(reply.status == 201, "\(reply.text)")
        return reply.object["code"] as? String ?? ""
    }
}

/// A device: its own X25519 key pair, asking for keys as an app.
struct Device {
    let id: String
    let privateKey = Curve25519.KeyAgreement.PrivateKey()

    init(id: String = "device-" + UUID().uuidString) { self.id = id }

    func request(_ keyID: String, app: (id: String, credential: String), on server: TestServer) async throws -> HTTP.Reply {
        try await HTTP(base: server.base).call("POST", "/v1/device/keys/\(keyID)", json: [
            "appID": app.id, "credential": app.credential, "deviceID": id,
            "devicePublicKey": privateKey.publicKey.rawRepresentation.base64EncodedString(),
        ])
    }

    /// Opens a delivery with this device's private key (or another one, to show it fails).
    func open(_ reply: HTTP.Reply, keyID: String, with key: Curve25519.KeyAgreement.PrivateKey? = nil) throws -> SymmetricKey {
        let object = reply.object
        let sealed = KeyDelivery.Sealed(
            encapsulatedKey: Data(base64Encoded: object["encapsulatedKey"] as? String ?? "") ?? Data(),
            ciphertext: Data(base64Encoded: object["ciphertext"] as? String ?? "") ?? Data())
        return try KeyDelivery.open(sealed, keyID: keyID, deviceID: id, using: key ?? privateKey)
    }
}

/// Which database a test runs on.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres
    var testDescription: String { rawValue }
    var isPostgres: Bool { self == .postgres }

    /// SQLite always; PostgreSQL too when COFFER_TEST_DATABASE_URL is set.
    static var available: [Backend] { TestServer.postgresURL == nil ? [.sqlite] : allCases }
}
