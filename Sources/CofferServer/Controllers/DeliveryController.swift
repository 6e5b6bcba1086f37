import CofferFormat
import Crypto
import Fluent
import Vapor

/// `POST /v1/device/keys/:key`: a device of an app obtains a model key, sealed to its own public
/// key (``KeyDelivery`` in CofferFormat), so the key never travels or rests in the clear.
///
/// A key goes only to an app of its team that is bound to a collection whose activated deployments
/// use it (``CollectionKeys``). Refusals come in an order that keeps them cheap and fair: the
/// client address's budget first (nothing written), then the credential (an old or revoked one is
/// refused before the app's budget is charged, so a leaked, rotated credential cannot starve the
/// app), then the app's and the device's budgets, then the key, then — for an app whose
/// attestation policy is not `none` — the device's attestation evidence (``DeviceAttestation``). Refusals are audited through
/// ``RefusalLog`` (identical ones in a minute are one row); deliveries are audited one by one.
///
/// For an app whose policy is not `none` the credential is no secret worth much (it ships in every
/// copy of the app), so its app-wide budget is charged only once the evidence passed: otherwise
/// one extracted credential could spend it with requests bearing no or bad evidence and keep every
/// genuine install of the app from its keys. Such requests are refused before any look-up when
/// they carry no evidence, and each refused one costs the client address one failure of the
/// budget wrong credentials spend (past it, 429 from that address only).
///
/// A key this instance cannot open because a rotation replaced its master key since it started is
/// 503 `master_key_rotated` (``StaleMasterKey``), found out only once opening failed.
struct DeliveryController: RouteCollection {
    struct DeliveryRequest: Content {
        let appID: UUID
        let credential: String
        let deviceID: String
        /// The device's X25519 public key, raw 32 bytes, base64.
        let devicePublicKey: String
        /// Evidence of a genuine install, for apps whose attestation policy is not `none`.
        let attestation: AttestationEvidence?
    }

    struct DeliveryResponse: Content {
        let keyID: String
        let suite: String
        let encapsulatedKey: String
        let ciphertext: String
    }

    let masterKey: MasterKey
    let credentials: AppCredentials
    let perAddress: RateLimiter
    let perApp: RateLimiter
    let perDevice: RateLimiter
    let refusals: RefusalLog
    let metrics: ServerMetrics
    /// Counts deliveries per key and day for the dashboard's charts.
    let usage: UsageCounter
    /// Checks attestation evidence for apps whose policy asks for it.
    let attestation: DeviceAttestation

    func boot(routes: any RoutesBuilder) throws {
        routes.post("v1", "device", "keys", ":key", use: deliver)
    }

    func deliver(req: Request) async throws -> DeliveryResponse {
        let client = req.clientAddress
        // The address's key for both its request budget and its failure budget.
        let addressKey = "address:" + AddressBudget.key(client)
        if let wait = perAddress.acquire(addressKey) {
            metrics.keyDeliveries(outcome: "rate_limited_address")
            throw Self.tooMany(wait)
        }
        let body = try req.content.decode(DeliveryRequest.self)
        let keyID = req.parameters.get("key") ?? ""
        guard (1...200).contains(body.deviceID.utf8.count), !body.deviceID.contains("|") else {
            throw APIError.invalid("deviceID must be 1 to 200 bytes without '|'")
        }
        guard let rawKey = Data(base64Encoded: body.devicePublicKey),
              let devicePublicKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: rawKey)
        else { throw APIError.invalid("devicePublicKey must be a base64 raw X25519 public key (32 bytes)") }

        let app: AppCredentials.App
        switch try await credentials.check(appID: body.appID, credential: body.credential, address: client, on: req.db) {
        case .valid(let valid):
            app = valid
        case .unknown:
            // Keyed by client address alone: made-up app IDs do not make new rows.
            try await refuse(req, nil, body, keyID, "invalid_credential", key: "invalid_credential|" + client)
            throw AppCredentials.invalid
        case .rotatedAway(let known):
            try await refuse(req, known, body, keyID, "credential_revoked")
            throw AppCredentials.rotatedAway
        case .revoked(let known):
            try await refuse(req, known, body, keyID, "app_revoked")
            throw AppCredentials.appRevoked
        }
        let attested = app.attestation.policy != .none
        /// The evidence checked; a refusal costs the address one failure.
        func checkEvidence() async throws {
            do {
                try await attestation.check(body.attestation, settings: app.attestation, appID: app.id, keyID: keyID,
                                            devicePublicKey: Array(rawKey), on: req.db)
            } catch let refusal as DeviceAttestation.Refusal {
                _ = credentials.failures.acquire(addressKey)
                try await refuse(req, app, body, keyID, refusal.code)
                throw APIError.forbidden(refusal.code, refusal.detail)
            }
        }
        if attested {
            if let wait = credentials.failures.exhausted(addressKey) {
                try await refuse(req, app, body, keyID, "rate_limited")
                throw Self.tooMany(wait)
            }
            // No evidence at all: refused before any look-up (and no challenge is at stake).
            if body.attestation == nil { try await checkEvidence() }
        }
        if let wait = (attested ? nil : perApp.acquire("app:\(app.id)")) ?? perDevice.acquire("device:\(app.id):\(body.deviceID)") {
            try await refuse(req, app, body, keyID, "rate_limited")
            throw Self.tooMany(wait)
        }
        guard let key = try await KeyRecord.find(keyID, on: req.db) else {
            try await refuse(req, app, body, keyID, "unknown_key")
            throw APIError.notFound("key")
        }
        guard key.$team.id == app.teamID else {
            // Recorded for the key's team: its owners want to see who asks for their keys. One row
            // a minute for all other teams' apps (the first named): keyed by the asking app, another
            // team's many apps would spend the rows the key team's own refusals need.
            try await refusals.record(.init(teamID: key.$team.id, action: "key.deliver", actor: "app:\(app.id)", target: keyID,
                                            reason: "other_team", deviceID: body.deviceID, key: "other_team|\(key.$team.id)"), on: req.db)
            metrics.keyDeliveries(outcome: "other_team")
            throw APIError.forbidden("other_team", "this key belongs to another team")
        }
        if key.revokedAt != nil {
            try await refuse(req, app, body, keyID, "key_revoked")
            throw APIError.forbidden("key_revoked", "this key is revoked")
        }
        guard try await CollectionKeys.isDeliverable(keyID, to: app.id, on: req.db) else {
            try await refuse(req, app, body, keyID, "not_in_app_collections")
            throw APIError.forbidden("not_in_app_collections",
                                     "no activated deployment of a collection this app is bound to uses this key (coffer app update --collections)")
        }
        if attested {
            // Last of the checks: the evidence costs signature and chain checks, and a request
            // refused for a cheaper reason must not use up the device's challenge.
            try await checkEvidence()
            if let wait = perApp.acquire("app:\(app.id)") {
                try await refuse(req, app, body, keyID, "rate_limited")
                throw Self.tooMany(wait)
            }
        }

        let material: SymmetricKey
        do {
            material = try masterKey.unwrap(key.wrappedKey, keyID: keyID, teamID: app.teamID)
        } catch {
            // Only now is the record read: a rotation by another instance since this one started
            // re-wrapped the key under a master key this one does not hold. 503, not 500: an
            // instance holding the new key answers; this one does once restarted with it.
            guard let stale = await StaleMasterKey.explaining(failureOf: masterKey, on: req.db) else { throw error }
            req.logger.warning("model key \(keyID) not delivered: \(stale)")
            metrics.keyDeliveries(outcome: "master_key_rotated")
            throw StaleMasterKey.refusal
        }
        let sealed = try KeyDelivery.seal(material, keyID: keyID, deviceID: body.deviceID, to: devicePublicKey)
        try await Audit.record(on: req.db, teamID: app.teamID, action: "key.deliver", actor: "app:\(app.id)",
                               target: keyID, outcome: "delivered", deviceID: body.deviceID)
        metrics.keyDeliveries(outcome: "delivered")
        usage.count(.keyDelivery, keyID)
        return DeliveryResponse(keyID: keyID, suite: KeyDelivery.suiteName, encapsulatedKey: sealed.encapsulatedKey.base64EncodedString(),
                                ciphertext: sealed.ciphertext.base64EncodedString())
    }

    /// Audits a refusal of a known app's request (or an unknown one's, with an explicit key): one row
    /// a minute per app and reason, naming the first key asked for.
    private func refuse(_ req: Request, _ app: AppCredentials.App?, _ body: DeliveryRequest, _ keyID: String, _ reason: String,
                        key: String? = nil) async throws {
        metrics.keyDeliveries(outcome: reason)
        let actor = app.map { "app:\($0.id)" } ?? "app:\(body.appID) from \(req.clientAddress)"
        try await refusals.record(.init(teamID: app?.teamID, action: "key.deliver", actor: actor, target: String(keyID.prefix(100)),
                                        reason: reason, deviceID: body.deviceID,
                                        key: key ?? "\(reason)|\(app.map { "\($0.id)" } ?? "")"), on: req.db)
    }

    static func tooMany(_ wait: Int) -> APIError {
        APIError(.tooManyRequests, "rate_limited", "too many key requests; retry in \(wait) s", headers: ["Retry-After": "\(wait)"])
    }
}
