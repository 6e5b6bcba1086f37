import Fluent
import SQLKit

/// 009: attested key release (issue 17).
///
/// - `apps.attestation`: the app's attestation policy as JSON (``AttestationSettings``); absent
///   means `none`, so every existing app behaves as before.
/// - `attestation_challenges`: single-use challenges (stored as SHA-256) handed to an app's devices.
/// - `attested_devices`: per app, each attested key (App Attest key ID, or the SHA-256 of an
///   Android attested key), its public key, the device's X25519 key it vouched for, and the counter
///   of its newest assertion.
/// - `attestation_revocations`: the operator's copy of Google's attestation status list, one row.
///
/// Released migrations are never edited.
struct AddAttestation: AsyncMigration {
    var name: String { "009_AddAttestation" }

    func prepare(on database: any Database) async throws {
        try await database.schema(AppRecord.schema).field("attestation", .string).update()
        try await database.schema(AttestationChallenges.table)
            .id()
            .field("app_id", .uuid, .required, .references("apps", "id", onDelete: .cascade))
            .field("challenge_hash", .string, .required)
            .field("expires_at", .datetime, .required)
            .unique(on: "challenge_hash")
            .create()
        try await database.schema(AttestedDeviceRecord.schema)
            .id()
            .field("app_id", .uuid, .required, .references("apps", "id", onDelete: .cascade))
            .field("key_id", .string, .required)
            .field("format", .string, .required)
            .field("public_key", .string, .required)
            .field("device_public_key", .string, .required)
            .field("counter", .int64, .required)
            .field("certificate_serials", .string, .required)
            .field("created_at", .datetime)
            .field("last_used_at", .datetime)
            .unique(on: "app_id", "key_id")
            .create()
        try await database.schema(AttestationRevocations.table)
            .field("id", .int, .identifier(auto: false))
            .field("list", .string, .required)
            .field("entries", .int, .required)
            .field("updated_at", .datetime, .required)
            .create()
        if let sql = database as? any SQLDatabase {
            try await sql.create(index: "attestation_challenges_expiry").on(AttestationChallenges.table).column("expires_at").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema(AttestationRevocations.table).delete()
        try await database.schema(AttestedDeviceRecord.schema).delete()
        try await database.schema(AttestationChallenges.table).delete()
        try await database.schema(AppRecord.schema).deleteField("attestation").update()
    }
}
