import Fluent
import Foundation

/// The server's Ed25519 manifest-signing key, its private half encrypted under the master key.
/// One row, `id = "manifest"`, so instances starting together agree on one key.
final class SigningKeyRecord: Model, @unchecked Sendable {
    static let schema = "signing_keys"

    @ID(custom: "id", generatedBy: .user) var id: String?
    /// ``SignedManifest/keyID(of:)`` of the public key.
    @Field(key: "key_id") var keyID: String
    @Field(key: "public_key") var publicKey: Data
    /// nonce | ciphertext | tag of the 32-byte private key, AES-256-GCM under the master key.
    @Field(key: "wrapped_key") var wrappedKey: Data
    @Field(key: "master_key_id") var masterKeyID: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(keyID: String, publicKey: Data, wrappedKey: Data, masterKeyID: String) {
        self.id = "manifest"
        self.keyID = keyID
        self.publicKey = publicKey
        self.wrappedKey = wrappedKey
        self.masterKeyID = masterKeyID
    }
}
