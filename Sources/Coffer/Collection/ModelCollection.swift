import Foundation

/// A set of models that arrive together, shaped after Core ML's `MLModelCollection`: one
/// deployment's models for this device, switched in one step.
///
/// ```swift
/// let flowers = try await ModelCollection.beginAccessing(identifier: "FlowerModels")
/// if let classifier = flowers.entries["FlowerClassifier"] {
///     let bytes = try await classifier.data()      // decrypted in memory
/// }
/// for await newer in ModelCollection.updates(identifier: "FlowerModels") { … }
/// await ModelCollection.endAccessing(identifier: "FlowerModels")
/// ```
public struct ModelCollection: Sendable {
    /// Where a collection came from.
    public enum Origin: Sendable, Equatable {
        /// The server sent or confirmed it just now.
        case server
        /// The cache, without asking the server (a background update may follow), or because the
        /// server's answer could not be used (`staleBecause`).
        case cache(staleBecause: UnavailableCause?)
        /// The app's bundled models: nothing was cached and the server's answer could not be used.
        case bundled(because: UnavailableCause)
    }

    /// The collection's identifier.
    public let identifier: String
    /// The deployment the models come from; nil for bundled models.
    public let deploymentID: String?
    /// The manifest's sequence number (grows with every activation); nil for bundled models.
    public let sequence: UInt64?
    /// When the manifest stops being valid without a new check; nil for bundled models.
    public let expiresAt: Date?
    /// Whether the manifest these models come from has expired (``expiresAt`` has passed): the
    /// server has not sent a newer one in time — the device was offline, or someone in between
    /// held back the server's answers (a freeze attack). The cache keeps serving these models;
    /// the app decides whether to use them. False for bundled models.
    ///
    /// The device's clock is trusted only forwards: ``expiresAt`` is compared with it or with the
    /// newest issue time of a manifest the cache verified, whichever is later, and while the
    /// clock is more than 10 minutes behind that issue time (set back, perhaps by whoever answers
    /// the device's time requests) the manifest counts as expired, since when it really expires
    /// cannot be told.
    public var isExpired: Bool {
        expiresAt.map { ManifestTime(deviceClock: deviceClock(), newestIssuedAt: newestIssuedAt).hasPassed($0) } ?? false
    }
    /// The models by name.
    public let entries: [String: Entry]
    /// Where this collection came from.
    public let origin: Origin
    /// Set when these models are the last known good: the SDK switched the collection back to
    /// them because a model of a newer deployment failed on this device (the app's
    /// ``Entry/reportFailure(_:)``, or the model failing its checks when opened). Stays set while
    /// the cache refuses that model, until a deployment naming another model for it is adopted.
    /// The ``CofferClient/updates(identifier:)`` stream announces the switch with it set.
    public internal(set) var fallback: Fallback? = nil
    /// The newest `issuedAt` of a manifest the cache had verified for the collection when this was
    /// served, and the device's clock: what ``isExpired`` judges by (``ManifestTime``).
    var newestIssuedAt: Date? = nil
    var deviceClock: @Sendable () -> Date = { Date() }

    /// Accesses `identifier` through ``CofferClient/shared``; see ``CofferClient/beginAccessing(identifier:progress:)``.
    public static func beginAccessing(identifier: String) async throws -> ModelCollection {
        try await CofferClient.shared.beginAccessing(identifier: identifier)
    }

    /// Accesses `identifier` through ``CofferClient/shared`` with a completion handler; the
    /// `Progress` counts the bytes downloaded and cancels the wait.
    @discardableResult
    public static func beginAccessing(identifier: String,
                                      completionHandler: @escaping @Sendable (Result<ModelCollection, any Error>) -> Void) -> Foundation.Progress {
        do {
            return try CofferClient.shared.beginAccessing(identifier: identifier, completionHandler: completionHandler)
        } catch {
            completionHandler(.failure(error))
            return Foundation.Progress(totalUnitCount: 0)
        }
    }

    /// Ends the accesses to `identifier` through ``CofferClient/shared``.
    public static func endAccessing(identifier: String) async {
        await (try? CofferClient.shared)?.endAccessing(identifier: identifier)
    }

    /// The collections `identifier` switches to from now on, through ``CofferClient/shared``.
    public static func updates(identifier: String) -> AsyncStream<ModelCollection> {
        guard let client = try? CofferClient.shared else { return AsyncStream { $0.finish() } }
        return client.updates(identifier: identifier)
    }

    /// Why updates of `identifier` fail from now on, through ``CofferClient/shared`` (see
    /// ``CofferClient/updateFailures(identifier:)``).
    public static func updateFailures(identifier: String) -> AsyncStream<UnavailableCause> {
        guard let client = try? CofferClient.shared else { return AsyncStream { $0.finish() } }
        return client.updateFailures(identifier: identifier)
    }
}
