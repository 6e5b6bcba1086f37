import Foundation

/// Where the SDK keeps its secrets: the device's key pair, the device ID and model keys fetched
/// from the server. Values are small (under 1 KiB); names are ASCII letters, digits, `.`, `_`, `-`.
public protocol KeyStore: Sendable {
    /// The value stored under `name`, or nil.
    func load(_ name: String) throws -> Data?
    /// Stores `value` under `name`, replacing what was there.
    func save(_ name: String, _ value: Data) throws
    /// Removes `name`; nothing happens if it is absent.
    func remove(_ name: String) throws
}

/// The names the SDK uses in a key store.
enum KeyStoreNames {
    static let deviceKey = "device-key"
    static let deviceID = "device-id"
    /// The identifier of this install's attested key (docs/ATTESTATION.md).
    static let attestedKey = "attested-key"
    /// The last counter an `android-key-attestation` signature used.
    static let attestationCounter = "attestation-counter"
    static func modelKey(_ keyID: String) -> String { "model-key." + keyID }

    static func isValid(_ name: String) -> Bool {
        (1...200).contains(name.utf8.count) && name.first != "."
            && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D }
    }
}
