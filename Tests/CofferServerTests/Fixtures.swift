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

    /// Creates an app; returns its ID and credential.
    func app(in team: String, name: String = "Demo") async throws -> (id: String, credential: String) {
        let reply = try await admin.call("POST", "/v1/teams/\(team)/apps", json: ["name": name, "platform": "ios", "bundleID": "com.example.demo"])
        #expect(reply.status == 201)
        return (reply.object["id"] as! String, reply.object["credential"] as! String)
    }

    /// Creates a model key; returns the `.modelkey` file contents parsed.
    func key(in team: String, name: String = "clf") async throws -> ModelKey {
        let reply = try await admin.call("POST", "/v1/teams/\(team)/keys", json: ["name": name])
        #expect(reply.status == 201)
        #expect(reply.header("Cache-Control") == "no-store")
        return try ModelKey(fileRepresentation: reply.body)
    }

    /// A user with `role` in `team`; returns an HTTP client with that user's token.
    func member(_ name: String, role: String, in team: String) async throws -> HTTP {
        let reply = try await admin.call("POST", "/v1/teams/\(team)/members", json: ["name": name, "role": role])
        #expect(reply.status == 201)
        return HTTP(base: server.base, token: reply.object["token"] as? String)
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
}
