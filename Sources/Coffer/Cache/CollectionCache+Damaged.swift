import CofferFormat
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Models found damaged on this device (``ModelCollection/Entry/intactOrMarked(_:)``): each is
/// marked by an empty file named by its SHA-256 in `damaged/`, and the next update that reaches
/// the server downloads it again (``CollectionUpdater``). The damaged file itself stays until the new
/// copy replaces it in one rename, so the collection's other models keep being served, offline too.
extension CollectionCache {
    /// Where the marks are.
    var damagedFolder: String { folder + "/damaged" }

    /// Marks the model at `blobPath` (a `blobs/SHA.coffer` of a collection's cache folder) as
    /// damaged. Best effort: without the mark the model keeps failing as damaged, unreported,
    /// until an update replaces it.
    static func markDamaged(blobPath: String) {
        guard let mark = damageMark(blobPath: blobPath) else { return }
        _ = mkdir((mark as NSString).deletingLastPathComponent, 0o700)
        let fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd >= 0 { close(fd) }
    }

    /// The mark of the model at `blobPath` (`ID/blobs/SHA.coffer` → `ID/damaged/SHA`); nil for a
    /// path not named like a model.
    private static func damageMark(blobPath: String) -> String? {
        let name = (blobPath as NSString).lastPathComponent
        guard name.hasSuffix(".coffer") else { return nil }
        let collection = ((blobPath as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        return collection + "/damaged/" + String(name.dropLast(".coffer".count))
    }

    /// Marks the model at `blobPath` damaged when `failure` is the disk's I/O error (`EIO`): a file
    /// the device can no longer read is downloaded again by the next update, as a damaged one is.
    /// Other failures (no descriptor or memory left, permissions) say nothing about the file.
    /// Returns whether it marked.
    @discardableResult
    static func markDamaged(blobPath: String, ifUnreadable failure: IOFailure) -> Bool {
        guard failure.code == EIO else { return false }
        markDamaged(blobPath: blobPath)
        return true
    }

    /// Whether the model at `blobPath` is marked damaged (``markDamaged(blobPath:)``).
    static func isMarkedDamaged(blobPath: String) -> Bool {
        guard let mark = damageMark(blobPath: blobPath) else { return false }
        var info = stat()
        return lstat(mark, &info) == 0
    }

    /// The SHA-256s marked damaged.
    func damagedModels() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: damagedFolder)) ?? []
        return Set(names.filter(Hex.isSHA256))
    }

    /// Points the previous version's link to model `sha256` (when it keeps one, to another file)
    /// at `path`, a verified and synced download about to replace the file in `blobs/`: after a
    /// damaged, missing or resized model is downloaded again, the last known good must not keep
    /// the damaged file, which damage in place shared with it. Done before the download replaces
    /// the file in `blobs/`, so that a crash between the two leaves the previous version the good
    /// copy and the next update downloads the model again. Best effort.
    func relinkPrevious(_ sha256: String, to path: String) {
        let previous = previousBlobPath(sha256)
        var linked = stat(), replacement = stat()
        guard lstat(previous, &linked) == 0, lstat(path, &replacement) == 0,
              linked.st_dev != replacement.st_dev || linked.st_ino != replacement.st_ino
        else { return }
        // Named like a model, so the previous version's pruning removes one a crash left.
        guard (try? Self.hardLink(path, replacing: previous, through: previousBlobsFolder + "/.relink-" + sha256 + ".coffer")) != nil else { return }
        try? DurableSync.synchronizeFolder(previousBlobsFolder)
    }

    /// Forgets the mark of `sha256` (downloaded again, or no longer cached).
    func clearDamaged(_ sha256: String) {
        unlink(damagedFolder + "/" + sha256)
    }
}
