import CofferFormat
import Crypto
import Fluent
import Vapor

/// `POST /v1/device/keys/:key`: a device of an app obtains a model key, sealed to its own public
/// key (``KeyDelivery`` in CofferFormat), so the key never travels or rests in the clear. Only apps of the key's team get it. Every delivery and refusal is audited.
struct DeliveryController: RouteCollection {
    struct DeliveryRequest: Content {
        let appID: UUID
        let credential: String
        let deviceID: String
        /// The device's X25519 public key, raw 32 bytes, base64.
        let devicePublicKey: String
    }

    struct DeliveryResponse: Content {
        let keyID: String
        let suite: String
        let encapsulatedKey: String
        let ciphertext: String
    }


    let masterKey: MasterKey
    let perApp: RateLimiter
    let perDevice: RateLimiter
    let metrics: ServerMetrics
    /// Counts deliveries per key and day for the dashboard's charts.
    let usage: UsageCounter

    func boot(routes: any RoutesBuilder) throws {
        routes.post("v1", "device", "keys", ":key", use: deliver)
    }

    func deliver(req: Request) async throws -> DeliveryResponse {
        let body = try req.content.decode(DeliveryRequest.self)
        let keyID = req.parameters.get("key") ?? ""
        guard (1...200).contains(body.deviceID.count), !body.deviceID.contains("|") else {
            throw APIError.invalid("deviceID must be 1 to 200 characters without '|'")
        }
        guard let rawKey = Data(base64Encoded: body.devicePublicKey),
              let devicePublicKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: rawKey)
        else { throw APIError.invalid("devicePublicKey must be a base64 raw X25519 public key (32 bytes)") }

        guard let app = try await AppRecord.find(body.appID, on: req.db),
              Secrets.matches(body.credential, hash: app.credentialHash) || app.previousCredentialHash.map({ Secrets.matches(body.credential, hash: $0) }) == true
        else {
            try await refuse(req, teamID: nil, app: body.appID, keyID: keyID, device: body.deviceID, reason: "invalid_credential")
            throw APIError(.unauthorized, "invalid_credential", "unknown app or wrong credential")
        }
        let appTeam = app.$team.id
        if let wait = perApp.acquire("app:\(body.appID)") ?? perDevice.acquire("device:\(body.appID):\(body.deviceID)") {
            try await refuse(req, teamID: appTeam, app: body.appID, keyID: keyID, device: body.deviceID, reason: "rate_limited")
            throw APIError(.tooManyRequests, "rate_limited", "too many key requests; retry in \(wait) s", headers: ["Retry-After": "\(wait)"])
        }
        if !Secrets.matches(body.credential, hash: app.credentialHash) {
            try await refuse(req, teamID: appTeam, app: body.appID, keyID: keyID, device: body.deviceID, reason: "credential_revoked")
            throw APIError.forbidden("credential_revoked", "this app credential was rotated; use the current one")
        }
        if app.revokedAt != nil {
            try await refuse(req, teamID: appTeam, app: body.appID, keyID: keyID, device: body.deviceID, reason: "app_revoked")
            throw APIError.forbidden("app_revoked", "this app is revoked")
        }
        guard let key = try await KeyRecord.find(keyID, on: req.db) else {
            try await refuse(req, teamID: appTeam, app: body.appID, keyID: keyID, device: body.deviceID, reason: "unknown_key")
            throw APIError.notFound("key")
        }
        guard key.$team.id == appTeam else {
            // Recorded for the key's team: its owners want to see who asks for their keys.
            try await refuse(req, teamID: key.$team.id, app: body.appID, keyID: keyID, device: body.deviceID, reason: "other_team")
            throw APIError.forbidden("other_team", "this key belongs to another team")
        }
        if key.revokedAt != nil {
            try await refuse(req, teamID: appTeam, app: body.appID, keyID: keyID, device: body.deviceID, reason: "key_revoked")
            throw APIError.forbidden("key_revoked", "this key is revoked")
        }

        let material = try masterKey.unwrap(key.wrappedKey, keyID: keyID, teamID: appTeam)
        let sealed = try KeyDelivery.seal(material, keyID: keyID, deviceID: body.deviceID, to: devicePublicKey)
        try await Audit.record(on: req.db, teamID: appTeam, action: "key.deliver", actor: "app:\(body.appID)",
                               target: keyID, outcome: "delivered", deviceID: body.deviceID)
        metrics.keyDeliveries(outcome: "delivered")
        usage.count(.keyDelivery, keyID)
        return DeliveryResponse(keyID: keyID, suite: KeyDelivery.suiteName, encapsulatedKey: sealed.encapsulatedKey.base64EncodedString(),
                                ciphertext: sealed.ciphertext.base64EncodedString())
    }

    private func refuse(_ req: Request, teamID: UUID?, app: UUID, keyID: String, device: String, reason: String) async throws {
        metrics.keyDeliveries(outcome: reason)
        try await Audit.record(on: req.db, teamID: teamID, action: "key.deliver", actor: "app:\(app)",
                               target: String(keyID.prefix(100)), outcome: "refused", reason: reason, deviceID: device)
    }
}
