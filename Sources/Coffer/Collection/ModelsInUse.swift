import CofferFormat
import Foundation

/// The models in use in this process — accessed through any client and not ended — by collection
/// folder: what an update, a fallback or ``CofferClient/endAccessing(identifier:)`` must not remove
/// from `blobs/` (docs/SDK.md, "The cache").
///
/// An app may make several clients on one cache folder — a new one when its credential rotates,
/// say, while entries of the old one are still open — and each client's update or fallback removes
/// the models its new state does not name. So the uses are kept for the process, not per client:
/// ``models(in:)`` answers for every client on the folder. A folder is known by what it is on the
/// disk (device and inode), not by the path a configuration spells, so two spellings of one folder
/// (through a link, with `..`, in another case on a case-insensitive volume) are one folder.
///
/// Each client holds one of these for its own uses (`retain`, ``release(_:)``); they end
/// with it, since its entries keep the client alive. Another process on the same folder (an app
/// extension, `coffer sync`) does not see them.
final class ModelsInUse: Sendable {
    /// One client's uses: by collection identifier, the folders it accessed the collection in (a
    /// cache folder removed and made again is another folder) and the SHA-256s it uses in each.
    private typealias Uses = [String: [FileIdentity: Set<String>]]

    private static let lock = NSLock()
    nonisolated(unsafe) private static var uses: [ObjectIdentifier: Uses] = [:]

    /// Marks the models of `collection`, served from `cache`, as in use by this client until
    /// ``release(_:)``. Bundled models (no SHA-256) are not in the cache and are not marked.
    func retain(_ collection: ModelCollection, in cache: CollectionCache) {
        retain(Set(collection.entries.values.compactMap(\.sha256)), in: cache)
    }

    /// Marks `models` (SHA-256s) of `cache`'s folder as in use by this client until ``release(_:)``;
    /// nothing when the folder is gone (its models went with it).
    func retain(_ models: Set<String>, in cache: CollectionCache) {
        guard !models.isEmpty, let folder = FileIdentity(path: cache.folder) else { return }
        let client = ObjectIdentifier(self)
        Self.lock.withLock {
            Self.uses[client, default: [:]][cache.identifier, default: [:]][folder, default: []].formUnion(models)
        }
    }

    /// Ends this client's use of every model of `identifier`; other clients' uses stay.
    func release(_ identifier: String) {
        let client = ObjectIdentifier(self)
        Self.lock.withLock {
            Self.uses[client]?[identifier] = nil
            if Self.uses[client]?.isEmpty == true { Self.uses[client] = nil }
        }
    }

    /// The SHA-256s of the models in `cache`'s folder that any client of this process uses.
    static func models(in cache: CollectionCache) -> Set<String> {
        guard let folder = FileIdentity(path: cache.folder) else { return [] }
        return lock.withLock {
            var models: Set<String> = []
            for client in uses.values {
                for folders in client.values { models.formUnion(folders[folder] ?? []) }
            }
            return models
        }
    }

    deinit {
        let client = ObjectIdentifier(self)
        Self.lock.withLock { Self.uses[client] = nil }
    }
}
