import CofferAttestation
import CofferFormat
import Crypto
import Fluent
import Foundation
import SQLKit
import X509

/// Checks the attestation evidence of a key request for an app whose policy is not `none`
/// (docs/ATTESTATION.md): the first request of an install attests a key and the device's X25519
/// key it vouches for; later requests assert with that key, their counter growing. A model key is
/// then sealed only to the attested device key.
struct DeviceAttestation: Sendable {
    /// A refusal: its reason code (answered, audited, counted) and one line for the device.
    struct Refusal: Error, Sendable {
        let code: String
        let detail: String
    }

    /// The roots the verifiers trust: Apple's and Google's, embedded; a test passes its own.
    struct Roots: Sendable {
        var apple: [Certificate]
        var android: [Certificate]

        /// Apple's App Attestation Root CA and Google's hardware attestation roots.
        static var embedded: Roots { Roots(apple: [AppleAppAttestVerifier.appleRoot], android: AndroidKeyAttestationVerifier.googleRoots) }
    }

    let roots: Roots
    let revocations: AttestationRevocations
    let metrics: ServerMetrics
    let challenges: AttestationChallenges

    /// Checks `evidence` for a request of `appID` (with `settings`, not `none`) for model key
    /// `keyID`, to be sealed to `devicePublicKey`. Throws ``Refusal``; a database error passes through.
    func check(_ evidence: AttestationEvidence?, settings: AttestationSettings, appID: UUID, keyID: String,
               devicePublicKey: [UInt8], on db: any Database) async throws {
        let format = settings.policy.rawValue
        // Installs are recorded with the policy they were checked against, and an assertion is
        // taken only under that same policy: a request that checked an attestation against the
        // policy before a change, and recorded it after the change forgot the installs, is no install.
        let digest = settings.digest
        do {
            guard let evidence else {
                throw Refusal(code: "attestation_required",
                              detail: "this app's key requests need \(format) evidence (docs/ATTESTATION.md)")
            }
            guard evidence.format == format else {
                throw Self.refusal(.invalid, "attestation.format must be \(format) for this app")
            }
            let outcome: String
            switch settings.policy {
            case .none:
                return
            case .appleAppAttest:
                guard let policy = settings.apple else { throw Self.refusal(.invalid, "the app's attestation policy is incomplete") }
                outcome = try await apple(evidence, policy: policy, digest: digest, appID: appID, keyID: keyID, devicePublicKey: devicePublicKey, on: db)
            case .androidKeyAttestation:
                guard let policy = settings.android else { throw Self.refusal(.invalid, "the app's attestation policy is incomplete") }
                outcome = try await android(evidence, policy: policy, digest: digest, appID: appID, keyID: keyID, devicePublicKey: devicePublicKey, on: db)
            }
            metrics.attestations(format: format, outcome: outcome)
        } catch let refusal as Refusal {
            metrics.attestations(format: format, outcome: refusal.code)
            throw refusal
        }
    }

    private func apple(_ evidence: AttestationEvidence, policy: AppleAppAttestPolicy, digest: String, appID: UUID, keyID: String,
                       devicePublicKey: [UInt8], on db: any Database) async throws -> String {
        let attestedKeyID = try AttestationEvidence.bytes(evidence.keyID, "keyID")
        guard attestedKeyID.count == 32 else { throw Self.refusal(.invalid, "attestation.keyID must be 32 bytes") }
        let verifier = AppleAppAttestVerifier(trustedRoots: roots.apple)
        if evidence.attestationObject != nil {
            let object = try AttestationEvidence.bytes(evidence.attestationObject, "attestationObject")
            let challenge = try await consumeChallenge(evidence, appID: appID, on: db)
            let key = try await Self.mapping {
                try await verifier.verifyAttestation(object, keyID: attestedKeyID,
                                                     clientData: AttestationClientData.attestation(challenge: challenge, devicePublicKey: devicePublicKey),
                                                     policy: policy, at: Date())
            }
            try await register(key, format: AttestationSettings.Policy.appleAppAttest.rawValue, digest: digest, appID: appID, devicePublicKey: devicePublicKey, on: db)
            return "attested"
        }
        guard evidence.assertion != nil else {
            throw Self.refusal(.invalid, "attestation needs attestationObject (an install's first request) or assertion")
        }
        let assertion = try AttestationEvidence.bytes(evidence.assertion, "assertion")
        let (row, key) = try await attested(attestedKeyID, digest: digest, appID: appID, devicePublicKey: devicePublicKey, on: db)
        let counter = try await Self.mapping {
            try verifier.verifyAssertion(assertion, clientData: AttestationClientData.keyRequest(keyID: keyID, devicePublicKey: devicePublicKey),
                                         key: key, policy: policy)
        }
        try await advance(row, to: counter, on: db)
        return "asserted"
    }

    private func android(_ evidence: AttestationEvidence, policy: AndroidKeyAttestationPolicy, digest: String, appID: UUID, keyID: String,
                         devicePublicKey: [UInt8], on db: any Database) async throws -> String {
        let verifier = AndroidKeyAttestationVerifier(trustedRoots: roots.android, revocations: revocations.current)
        if let texts = evidence.certificateChain {
            guard (1...AttestationEvidence.maximumChainLength).contains(texts.count) else {
                throw Self.refusal(.invalid, "attestation.certificateChain must hold 1 to \(AttestationEvidence.maximumChainLength) certificates")
            }
            let chain = try texts.map { try AttestationEvidence.bytes($0, "certificateChain") }
            let challenge = try await consumeChallenge(evidence, appID: appID, on: db)
            let key = try await Self.mapping {
                try await verifier.verifyAttestation(chain: chain,
                                                     clientData: AttestationClientData.attestation(challenge: challenge, devicePublicKey: devicePublicKey),
                                                     policy: policy, at: Date())
            }
            try await register(key, format: AttestationSettings.Policy.androidKeyAttestation.rawValue, digest: digest, appID: appID, devicePublicKey: devicePublicKey, on: db)
            return "attested"
        }
        guard evidence.signature != nil, let counter = evidence.counter else {
            throw Self.refusal(.invalid, "attestation needs certificateChain (an install's first request) or signature and counter")
        }
        guard let presented = UInt32(exactly: counter) else { throw Self.refusal(.invalid, "attestation.counter must be 0 to 4294967295") }
        let signature = try AttestationEvidence.bytes(evidence.signature, "signature")
        let attestedKeyID = try AttestationEvidence.bytes(evidence.keyID, "keyID")
        let (row, key) = try await attested(attestedKeyID, digest: digest, appID: appID, devicePublicKey: devicePublicKey, on: db)
        let accepted = try await Self.mapping {
            try verifier.verifyAssertion(signature: signature,
                                         clientData: AttestationClientData.keyRequest(keyID: keyID, devicePublicKey: devicePublicKey),
                                         counter: presented, key: key)
        }
        try await advance(row, to: accepted, on: db)
        return "asserted"
    }

    /// Takes the evidence's challenge: issued to this app, unexpired, unused.
    private func consumeChallenge(_ evidence: AttestationEvidence, appID: UUID, on db: any Database) async throws -> [UInt8] {
        let challenge = try AttestationEvidence.bytes(evidence.challenge, "challenge")
        guard try await challenges.consume(challenge, for: appID, on: db) else {
            throw Refusal(code: "attestation_challenge_invalid",
                          detail: "the challenge is unknown, used or expired; ask POST /v1/device/attestation/challenge for a new one")
        }
        return challenge
    }

    /// Records a newly attested key with the digest of the policy it was checked against; a key
    /// attested before is refused (App Attest attests a key once).
    private func register(_ key: AttestedKey, format: String, digest: String, appID: UUID, devicePublicKey: [UInt8],
                          on db: any Database) async throws {
        let row = AttestedDeviceRecord()
        row.appID = appID
        row.keyID = key.keyID.hexString
        row.format = format
        row.policyDigest = digest
        row.publicKey = Data(key.publicKey).base64EncodedString()
        row.devicePublicKey = Data(devicePublicKey).base64EncodedString()
        row.counter = Int64(key.counter)
        row.certificateSerials = key.certificateSerials.joined(separator: ",")
        row.lastUsedAt = Date()
        do {
            try await row.create(on: db)
        } catch where UniqueViolation.matches(error) {
            throw Self.refusal(.invalid, "this key was attested before; attest a new key")
        }
    }

    /// The attested key of an assertion, attested under the policy in force (`digest`: one changed
    /// since counts as unknown), which must vouch for the same device key.
    private func attested(_ attestedKeyID: [UInt8], digest: String, appID: UUID, devicePublicKey: [UInt8],
                          on db: any Database) async throws -> (AttestedDeviceRecord, AttestedKey) {
        guard let row = try await AttestedDeviceRecord.query(on: db).filter(\.$appID == appID)
            .filter(\.$keyID == attestedKeyID.hexString).filter(\.$policyDigest == digest).first()
        else {
            throw Refusal(code: "attestation_unknown_key", detail: "no attested key of this app has this keyID; attest first")
        }
        guard let stored = Data(base64Encoded: row.devicePublicKey), Array(stored) == devicePublicKey else {
            throw Refusal(code: "attestation_device_key_mismatch",
                          detail: "devicePublicKey is not the device key this attested key vouched for")
        }
        guard let publicKey = Data(base64Encoded: row.publicKey), let counter = UInt32(exactly: row.counter) else {
            throw Self.refusal(.invalid, "the attested key's record is damaged; attest a new key")
        }
        let serials = row.certificateSerials.split(separator: ",").map(String.init)
        return (row, AttestedKey(keyID: attestedKeyID, publicKey: Array(publicKey), counter: counter, certificateSerials: serials))
    }

    /// Stores an assertion's counter if no other request stored this one or a later one first.
    private func advance(_ row: AttestedDeviceRecord, to counter: UInt32, on db: any Database) async throws {
        let updated = try await db.sql().update(AttestedDeviceRecord.schema)
            .set("counter", to: SQLBind(Int64(counter))).set("last_used_at", to: SQLBind(Date()))
            .where("id", .equal, SQLBind(try row.requireID())).where("counter", .lessThan, SQLBind(Int64(counter)))
            .returning("id").all()
        guard !updated.isEmpty else {
            throw Self.refusal(.replayed, "the assertion's counter did not grow: it was used before")
        }
    }

    /// How long an attested install may go without asking for a key before it is forgotten (it
    /// attests again, as after a policy change): without this, every key ever attested would stay.
    static let unusedInstallLifetime: TimeInterval = 180 * 86_400

    /// Forgets installs that asked for no key within ``unusedInstallLifetime`` (periodic work).
    static func forgetUnusedInstalls(now: Date = Date(), on db: any Database) async throws {
        try await db.sql().delete(from: AttestedDeviceRecord.schema)
            .where("last_used_at", .lessThan, SQLBind(now.addingTimeInterval(-unusedInstallLifetime))).run()
    }

    /// A refusal with an ``AttestationFailure`` code.
    static func refusal(_ code: AttestationFailure.Code, _ detail: String) -> Refusal {
        Refusal(code: code.rawValue, detail: detail)
    }

    /// Runs a verifier, its failures as refusals.
    private static func mapping<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let failure as AttestationFailure {
            throw refusal(failure.code, failure.detail)
        }
    }
}
