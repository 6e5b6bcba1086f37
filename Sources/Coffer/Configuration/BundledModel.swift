import Foundation

/// A model shipped inside the app, served when nothing is cached and the server cannot be reached.
///
/// Sealed models (Coffer containers) are opened with their key from the key store or the server
/// like downloaded ones; plain models are handed out as they are. The next successful check
/// replaces them with the deployment's models.
public struct BundledModel: Sendable, Equatable {
    /// Where the model is, in the app bundle or beside the executable.
    public var url: URL
    /// A display version for the entry (for example the app version it shipped with).
    public var version: String

    /// A bundled model at `url`; whether it is sealed is read from its first bytes.
    public init(url: URL, version: String = "bundled") {
        self.url = url
        self.version = version
    }
}
