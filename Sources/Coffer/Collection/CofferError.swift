import Foundation

/// What went wrong, grouped so an app can act on it.
///
/// Messages are one line and never contain a credential, a key or model bytes.
public enum CofferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A model key could not be fetched: the server could not be reached or did not answer (like
    /// Core ML's `modelDecryptionKeyFetch`). Try again when the device is online.
    case keyFetchFailed(keyID: String, reason: String)
    /// The server refused to deliver a model key: `code` is its error code, such as
    /// `invalid_credential`, `app_revoked`, `key_revoked` or `other_team`.
    case keyRefused(keyID: String, code: String, reason: String)
    /// A model's bytes are not a sealed model that opens with its key, or the model is missing.
    case modelInvalid(name: String, reason: String)
    /// No collection can be served: nothing is cached (or the policy allows only the cache) and
    /// the server's answer could not be used, for `cause`.
    case collectionUnavailable(identifier: String, cause: UnavailableCause)
    /// The configuration cannot work: a bad URL, identifier, key or folder.
    case invalidConfiguration(String)
    /// The key store cannot be used for now: the Keychain stays locked until the device is first
    /// unlocked after it starts (or, on a Mac, while a keychain is locked and may not ask). Nothing
    /// is wrong with the configuration: try again once the user has unlocked the device
    /// (`UIApplication.protectedDataDidBecomeAvailableNotification`).
    case keyStoreUnavailable(String)

    public var description: String {
        switch self {
        case .keyFetchFailed(let keyID, let reason):
            return "the key \(keyID) could not be fetched: \(reason)"
        case .keyRefused(let keyID, let code, let reason):
            return "the server refused the key \(keyID) (\(code)): \(reason)"
        case .modelInvalid(let name, let reason):
            return "model \(name) cannot be opened: \(reason)"
        case .collectionUnavailable(let identifier, let cause):
            return "collection \(identifier) is unavailable: \(cause)"
        case .invalidConfiguration(let reason):
            return "invalid configuration: \(reason)"
        case .keyStoreUnavailable(let reason):
            return "the key store cannot be used now: \(reason)"
        }
    }
}

/// Why a collection could not be updated or served.
public enum UnavailableCause: Sendable, Equatable, CustomStringConvertible {
    /// The server could not be reached or did not answer in time.
    case offline(String)
    /// The server answered with an error, such as 401 (`invalid_credential`), 403 (`app_revoked`)
    /// or 404 (no such collection, or nothing active).
    case server(status: Int, code: String, reason: String)
    /// The manifest was refused: bad signature, expired, older than the cached one, for another
    /// collection, signed for another team than the one the app trusts, or the cached sequence
    /// with other content (a repository error: the network or the server is not to be trusted).
    case manifestRefused(String)
    /// A model was refused: its download's size or SHA-256 differs from what the manifest says.
    case modelRefused(name: String, reason: String)
    /// The manifest names a model that failed on this device (`reason`: why): the cache keeps
    /// serving its last known good models until a deployment names another model for `name`
    /// (docs/SDK.md, "Last known good"). Expected after a failure, not an error of the update.
    case lastKnownGood(name: String, reason: String)
    /// The cache folder cannot hold the update: it would exceed the configured bound, or the disk
    /// failed.
    case cache(String)
    /// The update policy allows only the cache, and nothing is cached.
    case notCached
    /// The caller cancelled the download.
    case cancelled

    public var description: String {
        switch self {
        case .offline(let reason): return "the server cannot be reached (\(reason))"
        case .server(let status, let code, let reason): return "the server answered HTTP \(status) \(code): \(reason)"
        case .manifestRefused(let reason): return "the manifest was refused: \(reason)"
        case .modelRefused(let name, let reason): return "model \(name) was refused: \(reason)"
        case .lastKnownGood(let name, let reason):
            return "model \(name) failed on this device (\(reason)); the last known good is kept until a deployment names another model for it"
        case .cache(let reason): return "the cache cannot be used: \(reason)"
        case .notCached: return "nothing is cached and the update policy allows only the cache"
        case .cancelled: return "the download was cancelled"
        }
    }
}
