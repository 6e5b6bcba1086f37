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
        let blobs = (blobPath as NSString).deletingLastPathComponent
        let name = (blobPath as NSString).lastPathComponent
        guard name.hasSuffix(".coffer") else { return }
        let folder = ((blobs as NSString).deletingLastPathComponent as NSString).appendingPathComponent("damaged")
        _ = mkdir(folder, 0o700)
        let fd = open(folder + "/" + String(name.dropLast(".coffer".count)), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd >= 0 { close(fd) }
    }

    /// The SHA-256s marked damaged.
    func damagedModels() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: damagedFolder)) ?? []
        return Set(names.filter(Hex.isSHA256))
    }

    /// Points the previous version's link to model `sha256` (when it keeps one) at the file in
    /// `blobs/`: after a damaged model was downloaded again, the last known good must not keep
    /// the damaged file, which damage in place shared with it. Best effort.
    func relinkPrevious(_ sha256: String) {
        let previous = previousBlobPath(sha256)
        var info = stat()
        guard lstat(previous, &info) == 0 else { return }
        // Named like a model, so the previous version's pruning removes one a crash left.
        let temporary = previousBlobsFolder + "/.relink-" + sha256 + ".coffer"
        unlink(temporary)
        guard link(blobPath(sha256), temporary) == 0 else { return }
        if rename(temporary, previous) != 0 { unlink(temporary) }
    }

    /// Forgets the mark of `sha256` (downloaded again, or no longer cached).
    func clearDamaged(_ sha256: String) {
        unlink(damagedFolder + "/" + sha256)
    }
}
