import Fluent
import Foundation

/// A key that attestation evidence showed an app's genuine install holds (``DeviceAttestation``).
final class AttestedDeviceRecord: Model, @unchecked Sendable {
    static let schema = "attested_devices"

    @ID(key: .id) var id: UUID?
    @Field(key: "app_id") var appID: UUID
    /// The attested key's identifier, lowercase hex (SHA-256 of its public key).
    @Field(key: "key_id") var keyID: String
    /// `apple-app-attest` or `android-key-attestation`.
    @Field(key: "format") var format: String
    /// ``AttestationSettings/digest`` of the policy the key was checked against (migration 012).
    @OptionalField(key: "policy_digest") var policyDigest: String?
    /// The attested P-256 public key, X9.63, base64.
    @Field(key: "public_key") var publicKey: String
    /// The device's X25519 public key the attestation vouched for, base64: keys are sealed to it only.
    @Field(key: "device_public_key") var devicePublicKey: String
    /// The counter of the newest accepted evidence.
    @Field(key: "counter") var counter: Int64
    /// The chain's serial numbers, comma-separated lowercase hex (Android), for later revocation checks.
    @Field(key: "certificate_serials") var certificateSerials: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    @OptionalField(key: "last_used_at") var lastUsedAt: Date?

    init() {}
}
