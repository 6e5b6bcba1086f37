import Fluent

extension CurrentMasterKey {
    /// How the database stands for a server given a master key that wrapped every stored key
    /// (``CurrentMasterKey/standing(of:on:holding:)``).
    enum Standing: Equatable, Sendable {
        /// The record names the key.
        case current
        /// No master key is recorded: a new database, or the first start after migration 015; a
        /// start records the key.
        case unrecorded
        /// The record names `recorded`, but every stored key is wrapped by the key: a rotation by a
        /// version from before the record, after a downgrade. The stored keys decide; a start
        /// corrects the record.
        case outdated(recorded: String)
    }

    /// How the database stands for a server given `key`, changing nothing: what a start judges
    /// before it records or corrects the record (``claim(_:on:)``), and what `coffer-server check`
    /// reports. With `holding`, the record is held until the caller's transaction ends.
    ///
    /// - Throws: ``MasterKeyMismatch`` when a stored key is wrapped by another master key
    ///   (``MasterKeyRotation/checkMatches(_:on:)``), or when none is stored and the record names another.
    static func standing(of key: MasterKey, on db: any Database, holding: Bool = false) async throws -> Standing {
        try await MasterKeyRotation.checkMatches(key, on: db)
        guard let recorded = try await read(on: db, holding: holding) else { return .unrecorded }
        guard recorded != key.id else { return .current }
        // Every stored key is wrapped by `key` (checked above): with any stored, they decide; with
        // none, the record does.
        guard try await KeyRecord.query(on: db).count() + SigningKeyRecord.query(on: db).count() > 0 else {
            throw MasterKeyMismatch("the database records", needed: recorded, given: key)
        }
        return .outdated(recorded: recorded)
    }
}
