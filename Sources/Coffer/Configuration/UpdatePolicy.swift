/// When `beginAccessing` asks the server for the latest collection.
public enum UpdatePolicy: String, Sendable, Codable, CaseIterable {
    /// Return the cached collection at once and check for an update in the background; a switch is
    /// announced on ``ModelCollection/updates(identifier:client:)``. With nothing cached, this waits
    /// for the download. The default.
    case useCachedAndUpdateInBackground
    /// Ask the server first and return the latest collection; fall back to the cache (or the
    /// bundled models) only when the server cannot be reached.
    case waitForLatest
    /// Never touch the network for the manifest: the cached collection, else the bundled models.
    case cachedOnly
}
