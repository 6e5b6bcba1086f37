import CofferFormat
import Crypto
import Fluent
import Foundation

/// The server's manifest-signing key (Ed25519): created on first start, stored in the database
/// encrypted under the master key (so several instances share it and it never rests in the clear).
struct ManifestSigner: Sendable {
    let privateKey: Curve25519.Signing.PrivateKey
    var publicKey: Curve25519.Signing.PublicKey { privateKey.publicKey }
    var keyID: String { SignedManifest.keyID(of: publicKey) }

    /// What the private key is bound to when wrapped, so the row cannot be passed off as a model key.
    static func binding(keyID: String) -> Data { Data("coffer signing key v1|\(keyID)".utf8) }

    /// The stored key, or a new one stored now. Instances racing on first start agree on one row.
    /// A new key is stored only while the database records `masterKey` as current
    /// (``CurrentMasterKey/require(_:on:)``): a rotation since the start's check refuses it.
    static func loadOrCreate(masterKey: MasterKey, on database: any Database) async throws -> ManifestSigner {
        if let row = try await SigningKeyRecord.find("manifest", on: database) {
            return try unwrap(row, with: masterKey)
        }
        let key = Curve25519.Signing.PrivateKey()
        let signer = ManifestSigner(privateKey: key)
        let keyID = signer.keyID, publicKey = key.publicKey.rawRepresentation
        let wrapped = try masterKey.seal(key.rawRepresentation, binding: binding(keyID: keyID))
        do {
            try await database.writeTransaction { db in
                try await CurrentMasterKey.require(masterKey, on: db)
                try await SigningKeyRecord(keyID: keyID, publicKey: publicKey, wrappedKey: wrapped, masterKeyID: masterKey.id).create(on: db)
            }
            return signer
        } catch {
            // Another instance stored its key first: use that one.
            guard let stored = try await SigningKeyRecord.find("manifest", on: database) else { throw error }
            return try unwrap(stored, with: masterKey)
        }
    }

    static func unwrap(_ row: SigningKeyRecord, with masterKey: MasterKey) throws -> ManifestSigner {
        guard row.masterKeyID == masterKey.id else {
            throw ServerSetupError("the manifest-signing key is wrapped by master key \(row.masterKeyID), not \(masterKey.id)")
        }
        let raw = try masterKey.open(row.wrappedKey, binding: binding(keyID: row.keyID))
        let signer = ManifestSigner(privateKey: try Curve25519.Signing.PrivateKey(rawRepresentation: raw))
        guard signer.keyID == row.keyID, signer.publicKey.rawRepresentation == row.publicKey else {
            throw ServerSetupError("the stored manifest-signing key does not match its public key")
        }
        return signer
    }
}

extension MasterKey {
    /// Encrypts a secret other than a model key, bound to `binding`.
    func seal(_ secret: Data, binding: Data) throws -> Data {
        try AES.GCM.seal(secret, using: key, authenticating: binding).combined!
    }

    /// Decrypts what ``seal(_:binding:)`` made.
    func open(_ sealed: Data, binding: Data) throws -> Data {
        try AES.GCM.open(try AES.GCM.SealedBox(combined: sealed), using: key, authenticating: binding)
    }
}
