import CofferFormat
import Foundation

extension CofferClient {
    /// The collection `identifier`, as ``beginAccessing(identifier:progress:)`` gives it, and its
    /// model `modelName` decrypted into memory: what an app that needs one model at once does.
    ///
    /// When this call waits for an update that downloads the model, the model is decrypted while
    /// it downloads: its key is fetched meanwhile and each chunk is decrypted and authenticated as
    /// it arrives, so no second pass over the file follows. Nothing is handed over before the whole
    /// container has the size and SHA-256 the signed manifest names, every chunk has been
    /// authenticated and the model is committed to the cache; a download that fails, is refused
    /// or starts its file again drops what was decrypted. Otherwise (the model was cached, another
    /// caller's update was joined, or the cache is served) the model is opened from the cache as
    /// ``ModelCollection/Entry/data()`` opens it. Call ``endAccessing(identifier:)`` as after any
    /// `beginAccessing`.
    ///
    /// Throws as ``beginAccessing(identifier:progress:)`` does, ``CofferError/modelInvalid(name:reason:)``
    /// when the collection has no such model, and what ``ModelCollection/Entry/data()`` throws.
    public func beginAccessing(identifier: String, opening modelName: String, progress: Foundation.Progress? = nil)
        async throws -> (collection: ModelCollection, model: Data)
    {
        // A folder model is a packed tree here too, as Entry.data() gives it.
        let (collection, entry, sink) = try await beginAccessing(identifier: identifier, following: modelName, progress: progress) { length, _ in
            Int(exactly: length).map { DataSink(count: $0) }
        }
        if let data = (sink as? DataSink)?.take() { return (collection, data) }
        return (collection, try await entry.data())
    }

    /// ``beginAccessing(identifier:progress:)``, following the download of `modelName` into the
    /// sink `makeSink` gives once the model's plaintext length (and whether it is a folder) is
    /// known (nil: not followed). Returns the collection, its entry `modelName` (the collection
    /// having none is ``CofferError/modelInvalid(name:reason:)``), and the sink when it holds the
    /// whole verified model; nil when the model was not decrypted while downloading (open the entry then).
    ///
    /// Until this returns a sink, what `makeSink`'s sink received is unverified and must be
    /// dropped: for callers in this package (the CLI's `coffer sync --open`) that write it to a
    /// private temporary file they commit only then.
    package func beginAccessing(
        identifier: String, following modelName: String, progress: Foundation.Progress? = nil,
        into makeSink: @escaping @Sendable (_ plaintextLength: UInt64, _ isFolder: Bool) throws -> (any RandomAccessSink)?
    ) async throws -> (collection: ModelCollection, entry: ModelCollection.Entry, sink: (any RandomAccessSink)?) {
        let follower = ModelFollower(modelName: modelName, keys: keys, makeSink: makeSink)
        let collection = try await beginAccessing(identifier: identifier, progress: progress, following: follower)
        let sink = await follower.finish()
        guard let entry = collection.entries[modelName] else { throw Self.noSuchModel(modelName, in: collection) }
        // The collection served may not be the update's (a later model failed, the cache was served).
        guard let sink, entry.isSealed, entry.sha256 != nil, entry.sha256 == follower.sha256 else { return (collection, entry, nil) }
        if let source = entry.source { await opened(entry, source: source) }
        return (collection, entry, sink)
    }

    private static func noSuchModel(_ name: String, in collection: ModelCollection) -> CofferError {
        let names = collection.entries.keys.sorted().joined(separator: ", ")
        return .modelInvalid(name: name, reason: "collection \(collection.identifier) has no such model (it has \(names))")
    }
}
