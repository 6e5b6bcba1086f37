import Fluent
import SQLKit

extension ConfigurationCheck {
    /// The stored keys and, once migration 015 has run, the database's record of their master key,
    /// against `masterKey`, judged as a start judges them (``CurrentMasterKey/standing(of:on:holding:)``,
    /// whose refusal is reported word for word: a database from before a rotation, a key file from
    /// another database). Changes nothing: where a start would record the key or correct the
    /// record, check says so. `name` names the database in a failure to read it.
    mutating func checkStoredKeys(_ masterKey: MasterKey, configuration: ServerConfiguration, on db: any Database, name: String) async {
        let recordKept = await Self.hasRun(AddCurrentMasterKey().name, on: db)
        do {
            if case .outdated(let recorded) = try await Self.standing(of: masterKey, on: db, recordKept: recordKept) {
                facts.append("the database records master key \(recorded), but every stored key is wrapped by master key \(masterKey.id): the next start corrects the record")
            }
        } catch let mismatch as MasterKeyMismatch {
            // A rotation that stopped after its commit: the next start moves its key into place.
            let keyFile = configuration.dataDirectory + "/master.key", pending = PendingMasterKey.path(for: keyFile)
            if configuration.masterKeyBase64 == nil, let next = try? MasterKey.read(at: pending),
               (try? await Self.standing(of: next, on: db, recordKept: recordKept)) != nil {
                facts.append("a master key rotation stopped after re-wrapping the stored keys: the next start moves \(pending) to \(keyFile)")
            } else {
                problems.append(mismatch.description)
            }
        } catch {
            problems.append("cannot read the stored keys in \(name): \(Self.describe(error))")
        }
    }

    /// ``CurrentMasterKey/standing(of:on:holding:)``; before migration 015 (no record yet: the next
    /// start makes one) the stored keys alone.
    private static func standing(of key: MasterKey, on db: any Database, recordKept: Bool) async throws -> CurrentMasterKey.Standing {
        guard recordKept else {
            try await MasterKeyRotation.checkMatches(key, on: db)
            return .unrecorded
        }
        return try await CurrentMasterKey.standing(of: key, on: db)
    }

    /// Whether Fluent's log of migrations says the migration named `name` has run on `db`.
    private static func hasRun(_ name: String, on db: any Database) async -> Bool {
        let row = try? await db.sql().raw("SELECT COUNT(*) AS n FROM _fluent_migrations WHERE name = \(bind: name)").first()
        return ((try? row?.decode(column: "n", as: Int.self)) ?? 0) > 0
    }
}
