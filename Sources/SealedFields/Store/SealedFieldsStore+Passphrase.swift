import Foundation
import GRDB

extension SealedFieldsStore {
    /// Replaces the passphrase or raw key: a new salt, verifier and key-encryption key, and every data key
    /// re-wrapped, in one transaction. Sealed rows are not touched. The old wrapped keys are overwritten
    /// in the file (`secure_delete`, then a WAL checkpoint), so the old passphrase cannot unwrap them from
    /// free pages; copies made before the change stay readable with the old passphrase.
    ///
    /// - Throws: ``SealedFieldsError/wrongKey`` when `current` is not the database's current key; nothing
    ///   is written then.
    public func changeKey(from current: KeySource, to new: KeySource) throws {
        let (newKEK, keys, active) = try writeErasingOldKeys { db -> (KeyEncryptionKey, [UInt32: DataKey], UInt32) in
            guard case let (meta, rows)? = try KeyTables.load(db) else { throw SealedFieldsError.corruptKeyTables }
            switch (current, meta.kdf) {
            case (.passphrase, "scrypt"), (.rawKey, "raw"): break
            default: throw SealedFieldsError.wrongKey
            }
            let old = try KeyEncryptionKey(source: current, salt: meta.salt, scrypt: meta.scrypt)
            guard old.matches(verifier: meta.verifier) else { throw SealedFieldsError.wrongKey }
            // Every data key the database holds now, read in this transaction: another store on the
            // same file may have rotated since this one opened, and a key left wrapped under the old
            // passphrase would make the whole database unopenable.
            let (keys, active) = try KeyTables.unwrap(rows, with: old)
            let (newMeta, newKEK) = try Self.newMeta(for: new)
            try KeyTables.saveMeta(db, newMeta)
            for row in rows {
                try KeyTables.saveKey(db, version: row.version, wrapped: newKEK.wrap(keys[row.version]!), active: row.isActive)
            }
            return (newKEK, keys, active)
        }
        kek.set(newKEK)
        keyring.replace(keys: keys, active: active)
    }

    /// ``changeKey(from:to:)`` for passphrases, keeping the default scrypt parameters for the new one.
    public func changePassphrase(from current: String, to new: String) throws {
        try changeKey(from: .passphrase(current), to: .passphrase(new))
    }
}
