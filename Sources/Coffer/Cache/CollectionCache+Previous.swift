import CofferFormat
#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The last known good version of a collection: the one complete state the cache switched from
/// last, kept so that a model failing on the device can be backed out without the network
/// (docs/SDK.md, "Last known good"):
///
/// ```
/// ROOT/collections/ID/previous/state.json        the state switched from (one rename replaces it)
/// ROOT/collections/ID/previous/blobs/SHA.coffer  hard links to its models
/// ```
///
/// Hard links keep `blobs/` holding exactly what the current state names while the previous
/// version's models stay on disk (models the two share take no second copy). At most one previous
/// version is kept; keeping it is best effort: a file system without hard links has none.
extension CollectionCache {
    var previousFolder: String { folder + "/previous" }
    var previousBlobsFolder: String { previousFolder + "/blobs" }
    var previousStatePath: String { previousFolder + "/state.json" }

    func previousBlobPath(_ sha256: String) -> String { previousBlobsFolder + "/" + sha256 + ".coffer" }

    /// Keeps `state`, whose models are in `blobs/`, as the previous version: links its models,
    /// replaces `previous/state.json` in one rename, then unlinks the models of the version it
    /// replaced. A crash at any step leaves one complete previous version (the old or the new).
    func keepAsPrevious(_ state: CacheState) throws {
        for path in [previousFolder, previousBlobsFolder] { try FileKeyStore.makePrivateFolder(path) }
        for sha in state.blobs.keys {
            guard link(blobPath(sha), previousBlobPath(sha)) == 0 || errno == EEXIST else {
                throw IOFailure(operation: .create, path: previousBlobPath(sha), errno: errno)
            }
        }
        try writeState(state, to: previousStatePath, models: previousBlobsFolder, step: "previous")
        prunePrevious(keeping: Set(state.blobs.keys))
    }

    /// The previous version, verified like the current one and complete: each of its models is in
    /// `previous/blobs/` with its size.
    func loadPrevious(publicKey: Curve25519.Signing.PublicKey) -> CacheState? {
        guard let state = loadVerifiedState(at: previousStatePath, publicKey: publicKey) else { return nil }
        for (sha, entry) in state.blobs where !Self.isFile(previousBlobPath(sha), size: entry.size) { return nil }
        return state
    }

    /// Links the previous version's models into `blobs/`: those already there with their size
    /// stay; one of another size there (damaged on the disk) is replaced in one rename, before
    /// the previous version's own link goes.
    func restorePreviousModels(_ state: CacheState) throws {
        for (sha, entry) in state.blobs where !hasBlob(sha, size: entry.size) {
            // Named like a model, so the next update's pruning removes one a crash left.
            try Self.hardLink(previousBlobPath(sha), replacing: blobPath(sha), through: blobsFolder + "/.restore-" + sha + ".coffer")
        }
        try DurableSync.synchronizeFolder(blobsFolder)
    }

    /// Makes `destination` a hard link to `source` in one rename, whatever was there: links
    /// `source` at `temporary` (removing one a crash left) and renames that over `destination`.
    static func hardLink(_ source: String, replacing destination: String, through temporary: String) throws(IOFailure) {
        unlink(temporary)
        guard link(source, temporary) == 0 else { throw IOFailure(operation: .create, path: destination, errno: errno) }
        guard rename(temporary, destination) == 0 else {
            let failure = IOFailure(operation: .rename, path: destination, errno: errno)
            unlink(temporary)
            throw failure
        }
    }

    /// Forgets the previous version: its state first, then its links.
    func removePrevious() {
        unlink(previousStatePath)
        prunePrevious(keeping: [])
    }

    private func prunePrevious(keeping: Set<String>) {
        Self.removeModels(in: previousBlobsFolder, suffix: ".coffer", keeping: keeping)
        for name in Self.names(in: previousFolder) where name.hasPrefix(".state.json.~") { unlink(previousFolder + "/" + name) }
    }
}
