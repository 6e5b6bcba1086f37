import CofferFormat
import Foundation

/// What the cache holds for one collection: the signed manifest it switched to last, as received,
/// the ETag it came with, and the manifest verified from it.
struct CacheState: Sendable {
    /// The file's JSON form, replaced in one rename.
    struct Stored: Codable, Sendable {
        /// The file's format; other values are ignored (the cache is then rebuilt).
        var format = 1
        /// The envelope exactly as the server sent it; verified again on every load.
        var envelope: Data
        /// The envelope's ETag, for conditional requests.
        var etag: String?
        /// When the server last sent or confirmed this manifest.
        var checkedAt: Date
    }

    var stored: Stored
    let manifest: Manifest

    init(envelope: Data, etag: String?, manifest: Manifest, checkedAt: Date = Date()) {
        stored = Stored(envelope: envelope, etag: etag, checkedAt: checkedAt)
        self.manifest = manifest
    }

    init(stored: Stored, manifest: Manifest) {
        self.stored = stored
        self.manifest = manifest
    }

    /// Whether a conditional request may be sent: more than half of the manifest's lifetime is
    /// left at `time` (after that, ask for a new signing period without `If-None-Match`), and the
    /// device's clock is not behind the newest manifest the cache verified (``ManifestTime``): when
    /// it is, how much of the lifetime is left cannot be told, and only a newly signed manifest
    /// (never a 304) keeps the cache current.
    func isFresh(at time: ManifestTime) -> Bool {
        guard !time.isClockBehind else { return false }
        let lifetime = manifest.expiresAt.timeIntervalSince(manifest.issuedAt)
        return manifest.expiresAt.timeIntervalSince(time.now) > lifetime / 2
    }

    /// The distinct sealed models the manifest names, by SHA-256.
    var blobs: [String: Manifest.Entry] {
        var result: [String: Manifest.Entry] = [:]
        for entry in manifest.models.values { result[entry.sha256] = entry }
        return result
    }
}
