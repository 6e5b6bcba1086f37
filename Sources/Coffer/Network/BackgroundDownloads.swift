import Foundation

/// Model downloads that go on while the app is suspended or not running: a background
/// `URLSession` on Apple platforms (docs/SDK.md, "Background downloads").
///
/// Set ``CofferConfiguration/backgroundDownloads`` to use it. Manifests, keys and reports keep
/// the foreground transport; sealed models are fetched by download tasks of at most 64 MiB each,
/// all of a model's pieces handed to the system at once, so they move while the app is not
/// running. A finished piece waits in ``stagingDirectory`` until the next update adopts it into the
/// model's part file, hashing it on the way; the model must still have the manifest's SHA-256.
///
/// Forward the app delegate's `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
/// to ``CofferClient/handleEventsForBackgroundURLSession(_:completionHandler:)``, and create the
/// ``CofferClient`` when the app launches, which re-attaches to the session and its running tasks.
///
/// On Linux there are no background sessions: the same code runs over a foreground session (that
/// is how it is tested there).
public struct BackgroundDownloads: Sendable, Equatable {
    /// The background session's identifier; one per app (and per extension that downloads, with
    /// ``sharedContainerIdentifier``).
    public var identifier: String
    /// Where finished pieces wait to be adopted (created 0700); pieces left for seven days are removed.
    public var stagingDirectory: URL
    /// The App Group container an app extension's session shares with its app (an extension's
    /// background session without one is invalidated at once); put ``stagingDirectory`` in that
    /// container too. Nil for the app itself. Apple platforms only.
    public var sharedContainerIdentifier: String?
    /// Whether pieces may download over a cellular connection.
    public var allowsCellularAccess = true
    /// Whether pieces may download over an expensive connection (cellular, a personal hotspot);
    /// false waits for Wi-Fi or Ethernet. Apple platforms only.
    public var allowsExpensiveNetworkAccess = true
    /// Whether pieces may download in Low Data Mode. Apple platforms only.
    public var allowsConstrainedNetworkAccess = true
    /// Whether the system may wait for a good moment (power, Wi-Fi) to download. Apple's rule:
    /// transfers started while the app is in the background are discretionary whatever this says.
    public var isDiscretionary = false

    /// Settings with `identifier` (default: the bundle identifier followed by `.coffer`) and
    /// finished pieces in `stagingDirectory` (default: `background` in the default cache folder).
    public init(identifier: String? = nil, stagingDirectory: URL? = nil) {
        self.identifier = identifier ?? Self.defaultIdentifier
        self.stagingDirectory = stagingDirectory
            ?? CofferConfiguration.defaultCacheDirectory.appendingPathComponent("background", isDirectory: true)
    }

    /// The main bundle's identifier followed by `.coffer`.
    public static var defaultIdentifier: String { (Bundle.main.bundleIdentifier ?? "app") + ".coffer" }
}
