import CofferFormat
#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// The SDK's entry point: one configuration, its cache, and the collections accessed through it.
///
/// ```swift
/// try CofferClient.configure(CofferConfiguration(
///     serverURL: URL(string: "https://models.example.com")!, appID: "…", credential: "…",
///     publicKey: "…base64 from coffer-server public-key…"))
/// let flowers = try await ModelCollection.beginAccessing(identifier: "FlowerModels")
/// let model = try await flowers.entries["FlowerClassifier"]!.data()
/// ```
///
/// Several clients may share a cache folder, even in several processes: updates of a collection
/// take file locks, one update at a time, and a fallback or ``endAccessing(identifier:)`` never
/// waits for an update's network. Within a process, no client's update, fallback or
/// ``endAccessing(identifier:)`` removes a model that an access through another client on the
/// folder still uses; another process does not know of this one's accesses (docs/SDK.md, "The cache").
public final class CofferClient: Sendable {
    /// The configuration this client was made with.
    public let configuration: CofferConfiguration
    let api: DeviceAPI
    let hub = CollectionHub()
    /// This client's accesses, in the table of models in use that every client of the process shares.
    let modelsInUse = ModelsInUse()
    let listeners = Listeners<ModelCollection>()
    let failureListeners = Listeners<UnavailableCause>()
    let keys: ModelKeys
    let reporter: Reporter
    /// Models whose last open failed because of this device's file: their failures are not reported.
    let deviceFailures = DeviceFailures()

    /// A client for `configuration`; refuses a configuration that cannot work. Reports an earlier
    /// run left queued are sent in the background (unless the policy is ``UpdatePolicy/cachedOnly``).
    public init(configuration: CofferConfiguration) throws {
        try configuration.validate()
        self.configuration = configuration
        api = DeviceAPI(configuration: configuration, transport: configuration.transport ?? DeviceTransport(timeout: configuration.requestTimeout))
        keys = ModelKeys(api: api, store: configuration.keyStore, configuredDeviceID: configuration.deviceID)
        let reporter = Reporter(queue: ReportQueue(root: configuration.cacheDirectory), api: api,
                                background: configuration.updatePolicy != .cachedOnly)
        self.reporter = reporter
        if reporter.queue.mayHoldEvents { Task { await reporter.sendSoon() } }
        // Re-attaches to the background session, whose downloads may have run meanwhile.
        _ = api.pieceTransport
    }

    /// Takes the events of a background session that woke the app, if it is this SDK's (see
    /// ``BackgroundDownloads``); false for a session of the app's own. Call it from the app
    /// delegate's `application(_:handleEventsForBackgroundURLSession:completionHandler:)` after
    /// creating the client; `completionHandler` is called on the main thread once the session's
    /// events were delivered.
    @MainActor
    public static func handleEventsForBackgroundURLSession(_ identifier: String, completionHandler: @escaping () -> Void) -> Bool {
        BackgroundSessions.handleEvents(identifier, completionHandler: completionHandler)
    }

    private static let sharedClient = SharedClient()

    /// Makes a client for `configuration` the one ``ModelCollection``'s static methods use.
    public static func configure(_ configuration: CofferConfiguration) throws {
        sharedClient.set(try CofferClient(configuration: configuration))
    }

    /// The client set by ``configure(_:)``.
    public static var shared: CofferClient {
        get throws {
            guard let client = sharedClient.get() else {
                throw CofferError.invalidConfiguration("call CofferClient.configure(_:) before accessing a collection")
            }
            return client
        }
    }

    /// The device's ID: the configured one, else one made once and kept in the key store.
    public func deviceID() throws -> String { try keys.deviceID() }

    // MARK: accessing

    /// The collection `identifier` as the update policy says: the cached one (updating in the
    /// background), the latest from the server, or the bundled models when nothing else can be
    /// had. Its models stay on disk until ``endAccessing(identifier:)``.
    ///
    /// Throws ``CofferError/collectionUnavailable(identifier:cause:)`` when nothing can be served,
    /// ``CofferError/invalidConfiguration(_:)`` for a bad identifier.
    public func beginAccessing(identifier: String, progress: Foundation.Progress? = nil) async throws -> ModelCollection {
        try await beginAccessing(identifier: identifier, progress: progress, following: nil)
    }

    /// ``beginAccessing(identifier:progress:)``; when it waits for an update, `follower` follows
    /// the download of its model (``ModelFollower``).
    func beginAccessing(identifier: String, progress: Foundation.Progress?, following follower: ModelFollower?) async throws -> ModelCollection {
        let cache = try CollectionCache(root: configuration.cacheDirectory, identifier: identifier, teamID: configuration.teamID)
        var loaded = cache.loadState(publicKey: configuration.publicKey)
        // No update will run to finish a fallback a crash interrupted: this access does.
        if configuration.updatePolicy == .cachedOnly { loaded = finishingInterruptedFallback(cache, loaded: loaded) }
        let cached = servedState(cache, loaded: loaded)
        let collection: ModelCollection
        switch (configuration.updatePolicy, cached) {
        case (.cachedOnly, let cached?):
            collection = self.collection(cached, cache: cache, origin: .cache(staleBecause: nil))
        case (.cachedOnly, nil):
            collection = try bundled(identifier, because: loaded == nil ? .notCached : .cache(Self.incompleteCache))
        case (.useCachedAndUpdateInBackground, let cached?):
            collection = self.collection(cached, cache: cache, origin: .cache(staleBecause: nil))
            await hub.updateInBackground(identifier) { [self] shared async throws(SyncFailure) in
                try await update(cache, progress: shared)
            }
        default:
            collection = try await latest(cache, progress: progress, following: follower)
        }
        modelsInUse.retain(collection, in: cache)
        return collection
    }

    /// The same with a completion handler, as `MLModelCollection` has it: the returned `Progress`
    /// counts the bytes to download, and cancelling it cancels the wait (the download stays
    /// resumable).
    @discardableResult
    public func beginAccessing(identifier: String,
                               completionHandler: @escaping @Sendable (Result<ModelCollection, any Error>) -> Void) -> Foundation.Progress {
        let progress = Foundation.Progress(totalUnitCount: 1)
        let task = Task {
            do {
                completionHandler(.success(try await beginAccessing(identifier: identifier, progress: progress)))
            } catch {
                completionHandler(.failure(error))
            }
        }
        progress.cancellationHandler = { task.cancel() }
        return progress
    }

    /// Ends the accesses to `identifier` through this client: models that an update or a fallback
    /// replaced meanwhile are removed, unless an access through another client of this process on
    /// the same cache folder still uses them. It never waits for an update's downloads: while an
    /// update of the collection is in flight (in this process or another), the models that update
    /// may switch to or copy from stay, with its downloads (removed, if unused, once it switched,
    /// or by the next `endAccessing` or update).
    public func endAccessing(identifier: String) async {
        modelsInUse.release(identifier)
        guard let cache = try? CollectionCache(root: configuration.cacheDirectory, identifier: identifier, teamID: configuration.teamID),
              let lock = try? await cache.lock()
        else { return }
        defer { lock.release() }
        guard let current = cache.loadState(publicKey: configuration.publicKey) else { return }
        let partial = Set(CollectionCache.names(in: cache.stagingFolder).map { String($0.prefix { $0 != "." }) })
        cache.removeUnusedBesideUpdate(keeping: Set(current.blobs.keys).union(ModelsInUse.models(in: cache)), resumable: partial)
    }

    /// The collections `identifier` switches to from now on (after updates in the background or
    /// by other callers), as an `AsyncSequence`.
    public func updates(identifier: String) -> AsyncStream<ModelCollection> {
        listeners.stream(identifier)
    }

    /// Why updates of `identifier` fail from now on, one cause per failed update — above all the
    /// background updates of ``UpdatePolicy/useCachedAndUpdateInBackground``, which otherwise show
    /// only as the cache being served. An update the caller cancelled is not a failure.
    ///
    /// ```swift
    /// for await cause in client.updateFailures(identifier: "FlowerModels") {
    ///     if case .server(401, _, _) = cause { … }   // the app's credential was revoked
    /// }
    /// ```
    public func updateFailures(identifier: String) -> AsyncStream<UnavailableCause> {
        failureListeners.stream(identifier)
    }

    /// The cached collection without any request, or nil when nothing usable is cached.
    public func cachedCollection(identifier: String) throws -> ModelCollection? {
        let cache = try CollectionCache(root: configuration.cacheDirectory, identifier: identifier, teamID: configuration.teamID)
        let loaded = finishingInterruptedFallback(cache, loaded: cache.loadState(publicKey: configuration.publicKey))
        return servedState(cache, loaded: loaded).map { collection($0, cache: cache, origin: .cache(staleBecause: nil)) }
    }

    // MARK: internals

    /// Asks the server; on failure, the cache, then the bundled models.
    private func latest(_ cache: CollectionCache, progress: Foundation.Progress?, following follower: ModelFollower?) async throws -> ModelCollection {
        do {
            // An update already under way for another caller is joined: its download is not followed.
            let outcome = try await hub.update(cache.identifier, progress: progress) { [self] shared async throws(SyncFailure) in
                try await update(cache, progress: shared, following: follower)
            }
            return collection(outcome.state, cache: cache, origin: .server)
        } catch {
            let cause = (error as? SyncFailure)?.cause ?? .cache("\(error)")
            if cause == .cancelled { throw CofferError.collectionUnavailable(identifier: cache.identifier, cause: .cancelled) }
            if let cached = servedState(cache) {
                return collection(cached, cache: cache, origin: .cache(staleBecause: cause))
            }
            return try bundled(cache.identifier, because: cause)
        }
    }

    /// The cached state to serve without the server (``servedState(_:loaded:)``).
    private func servedState(_ cache: CollectionCache) -> CacheState? {
        servedState(cache, loaded: cache.loadState(publicKey: configuration.publicKey))
    }

    /// `loaded`, the cached state, when it may be served without the server. A version some of
    /// whose models have gone from the cache (``CollectionCache/absentModels(of:)``) serves the
    /// others only when the app bundles no models: with bundled models, the bundled set is served
    /// instead of a mix of versions, or of some models and none.
    private func servedState(_ cache: CollectionCache, loaded: CacheState?) -> CacheState? {
        guard let state = loaded else { return nil }
        guard configuration.bundledModels.isEmpty || cache.absentModels(of: state).isEmpty else { return nil }
        return state
    }

    /// `loaded`, or the previous version when `loaded` names a model recorded as failed: a fallback
    /// a crash interrupted after recording the failure (``LastKnownGood``) is finished here, as the
    /// next update would finish it, under the collection's lock, and announced on
    /// ``updates(identifier:)``. The failed version's models stay (an access of this process may
    /// use them) until the next update or ``endAccessing(identifier:)``, and so do models of older
    /// versions that accesses of this process still use. When another client holds
    /// the collection's lock — an update's step, which finishes the fallback first, or a
    /// fallback — this one does not wait for it: the state is read again.
    private func finishingInterruptedFallback(_ cache: CollectionCache, loaded: CacheState?) -> CacheState? {
        guard let state = loaded, let recorded = try? cache.loadFailed(), recorded.failedModel(in: state.manifest) != nil else { return loaded }
        guard let lock = try? cache.lockIfFree() else { return cache.loadState(publicKey: configuration.publicKey) }
        defer { lock.release() }
        // Read again under the lock: another client may have finished it meanwhile.
        guard let current = cache.loadState(publicKey: configuration.publicKey), let failed = try? cache.loadFailed(),
              let previous = try? LastKnownGood(cache: cache, publicKey: configuration.publicKey)
                  .finish(current, failed: failed, inUse: Set(current.blobs.keys).union(ModelsInUse.models(in: cache)))
        else { return cache.loadState(publicKey: configuration.publicKey) }
        listeners.announce(collection(previous, cache: cache, origin: .cache(staleBecause: nil)), to: cache.identifier)
        return previous
    }

    /// Why the bundled models are served instead of an incomplete cached version under ``UpdatePolicy/cachedOnly``.
    static let incompleteCache = "models of the cached version are missing from the cache (the next update downloads them)"

    /// One update, announced to listeners when it switched the collection or failed.
    private func update(_ cache: CollectionCache, progress: DownloadProgress, following follower: ModelFollower? = nil)
        async throws(SyncFailure) -> CollectionUpdater.Outcome
    {
        do {
            return try await updateOnce(cache, progress: progress, following: follower)
        } catch {
            if error.cause != .cancelled { failureListeners.announce(error.cause, to: cache.identifier) }
            throw error
        }
    }

    private func updateOnce(_ cache: CollectionCache, progress: DownloadProgress, following follower: ModelFollower?)
        async throws(SyncFailure) -> CollectionUpdater.Outcome
    {
        let deviceID: String
        do {
            deviceID = try keys.deviceID()
        } catch {
            throw .cache("\(error)")
        }
        let updater = CollectionUpdater(configuration: configuration, api: api, cache: cache, deviceID: deviceID,
                                        inUse: { ModelsInUse.models(in: cache) }, reporter: reporter,
                                        finishedFallback: { [self] in
                                            listeners.announce(collection($0, cache: cache, origin: .cache(staleBecause: nil)), to: cache.identifier)
                                        }, follower: follower)
        let outcome = try await updater.run(progress: progress)
        if case .updated(let state) = outcome {
            listeners.announce(collection(state, cache: cache, origin: .server), to: cache.identifier)
        }
        return outcome
    }

    func collection(_ state: CacheState, cache: CollectionCache, origin: ModelCollection.Origin) -> ModelCollection {
        let manifest = state.manifest
        let source = ModelCollection.Entry.Source(collection: manifest.collection, deploymentID: manifest.deploymentID,
                                                  sequence: manifest.sequence, client: self)
        var entries: [String: ModelCollection.Entry] = [:]
        for (name, model) in manifest.models {
            entries[name] = ModelCollection.Entry(
                modelName: name, version: model.versionID, sha256: model.sha256, size: UInt64(model.size), keyID: model.keyID,
                modelURL: URL(fileURLWithPath: cache.blobPath(model.sha256)), isSealed: true, keys: keys, source: source)
        }
        var collection = ModelCollection(identifier: manifest.collection, deploymentID: manifest.deploymentID, sequence: manifest.sequence,
                                         expiresAt: manifest.expiresAt, entries: entries, origin: origin)
        let failed = try? cache.loadFailed()
        if let failed, failed.failedModel(in: manifest) == nil, let last = failed.models.last {
            collection.fallback = ModelCollection.Fallback(last)
        }
        // Its expiry is judged as an update judges it: never before the newest issuedAt verified
        // (after a fallback, the failed manifest's is newer than the one served).
        collection.newestIssuedAt = ManifestTime.newestIssuedAt(of: [manifest, cache.floor(of: failed, publicKey: configuration.publicKey)])
        collection.deviceClock = configuration.deviceClock
        return collection
    }

    /// The bundled models, or the cause when there are none.
    private func bundled(_ identifier: String, because cause: UnavailableCause) throws -> ModelCollection {
        guard !configuration.bundledModels.isEmpty else { throw CofferError.collectionUnavailable(identifier: identifier, cause: cause) }
        var entries: [String: ModelCollection.Entry] = [:]
        for (name, model) in configuration.bundledModels {
            // Sealed or not is the magic's word alone: a container whose header cannot be read (a
            // newer version, a damaged file) is still sealed, and opening it says why, rather
            // than handing out its ciphertext as the model.
            let header: ContainerHeader?, sealed: Bool
            do {
                (header, sealed) = (try SealedModel.readHeader(path: model.url.path), true)
            } catch ContainerError.notAContainer {
                (header, sealed) = (nil, false)
            } catch is IOFailure {
                (header, sealed) = (nil, false)  // unreadable: served as it is, and reading it says why
            } catch {
                (header, sealed) = (nil, true)
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: model.url.path)[.size] as? NSNumber)?.uint64Value ?? 0
            entries[name] = ModelCollection.Entry(modelName: name, version: model.version, sha256: nil, size: size,
                                                  keyID: header?.keyID, modelURL: model.url, isSealed: sealed, keys: keys)
        }
        return ModelCollection(identifier: identifier, deploymentID: nil, sequence: nil, expiresAt: nil, entries: entries,
                               origin: .bundled(because: cause))
    }
}

/// The client ``CofferClient/configure(_:)`` set.
private final class SharedClient: @unchecked Sendable {
    private let lock = NSLock()
    private var client: CofferClient?
    func set(_ client: CofferClient) { lock.withLock { self.client = client } }
    func get() -> CofferClient? { lock.withLock { client } }
}
