import Vapor

extension Application {
    private enum BlobStoreKey: StorageKey { typealias Value = any BlobStore }

    /// The blob store ``configure(_:_:)`` opened (nil before it ran).
    var blobStore: (any BlobStore)? {
        get { storage[BlobStoreKey.self] }
        set { storage[BlobStoreKey.self] = newValue }
    }
}
