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
        let newKEK = try writeErasingOldKeys { db -> KeyEncryptionKey in
            guard case let (meta, _)? = try KeyTables.load(db) else { throw SealedFieldsError.corruptKeyTables }
            switch (current, meta.kdf) {
            case (.passphrase, "scrypt"), (.rawKey, "raw"): break
            default: throw SealedFieldsError.wrongKey
            }
            let old = try KeyEncryptionKey(source: current, salt: meta.salt, scrypt: meta.scrypt)
            guard old.matches(verifier: meta.verifier) else { throw SealedFieldsError.wrongKey }
            let (newMeta, newKEK) = try Self.newMeta(for: new)
            try KeyTables.saveMeta(db, newMeta)
            let active = keyring.active.version
            for key in keyring.all {
                try KeyTables.saveKey(db, version: key.version, wrapped: newKEK.wrap(key), active: key.version == active)
            }
            return newKEK
        }
        kek.set(newKEK)
    }

    /// ``changeKey(from:to:)`` for passphrases, keeping the default scrypt parameters for the new one.
    public func changePassphrase(from current: String, to new: String) throws {
        try changeKey(from: .passphrase(current), to: .passphrase(new))
    }
}
