import Fluent
import Foundation
import SQLKit

/// 012: `attested_devices.policy_digest`, the ``AttestationSettings/digest`` of the policy an
/// install was checked against; an assertion is taken only under that same policy. Rows from
/// before get their app's policy in force now (a policy change always removed the rows of the
/// old one).
///
/// Released migrations are never edited.
struct AddAttestedPolicyDigest: AsyncMigration {
    var name: String { "012_AddAttestedPolicyDigest" }

    func prepare(on database: any Database) async throws {
        try await database.schema(AttestedDeviceRecord.schema).field("policy_digest", .string).update()
        guard let sql = database as? any SQLDatabase else { return }
        struct Row: Decodable {
            let id: UUID
            let attestation: String?
        }
        let apps = try await sql.raw("SELECT id, attestation FROM \(unsafeRaw: AppRecord.schema) WHERE attestation IS NOT NULL").all(decoding: Row.self)
        for app in apps {
            // A policy this server cannot read keeps its installs without a digest: no assertion matches them.
            guard let settings = try? AttestationSettings.stored(app.attestation) else { continue }
            try await sql.update(AttestedDeviceRecord.schema).set("policy_digest", to: SQLBind(settings.digest))
                .where("app_id", .equal, SQLBind(app.id)).run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema(AttestedDeviceRecord.schema).deleteField("policy_digest").update()
    }
}
