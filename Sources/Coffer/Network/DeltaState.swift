import CofferFormat
import Foundation

/// Where one download stands on the way to a delta update, and what it does next.
///
/// A download that may be a delta first fetches the new container's first bytes; if they are a
/// version 2 header whose key a cached model shares, the rest follows a ``DeltaPlan``; otherwise
/// (version 1, another key, nothing cached in common) it goes on as a whole download, having lost
/// nothing: the bytes fetched so far are the container's own first bytes. Everything is decided
/// from the part file, so a resumed download plans again from what it holds.
enum DeltaState: Sendable {
    /// Download the rest in pieces.
    case whole
    /// Fetch the header first.
    case learningHeader
    /// Assemble the rest by the plan: cached runs copied, the others downloaded.
    case planned(DeltaPlan)

    /// Whether a plan was made (some bytes are copied from the cache).
    var isPlanned: Bool {
        if case .planned = self { return true }
        return false
    }

    /// The longest header a delta reads into memory (16 MiB: a chunk table of about 466,000
    /// chunks, a model of over 100 GiB at the average chunk size). The header is read before the
    /// container can be verified, so whoever answers for the blob could otherwise name a table as
    /// long as the model; a longer one is downloaded whole, as any other.
    static let maximumHeaderLength = 16 << 20

    /// What to do at the current offset.
    enum Step: Sendable {
        /// Download up to (not including) `end`, in pieces.
        case download(end: UInt64)
        /// Assemble the rest by the plan (``DeltaAssembly``).
        case assemble(DeltaPlan)
    }

    /// The next step at `start` (the part file's length) of a `size`-byte container whose signed
    /// manifest entry names key `keyID`. The header is not verified yet (its MAC needs the key):
    /// a header that names another key is downloaded whole, so a mirror cannot steer the plan to
    /// cached models sealed with other keys (nor learn from the ranges asked which ones are cached).
    func next(at start: UInt64, size: UInt64, keyID expected: String, writer: PartWriter, cachedModels: [String],
              skipped: (UInt64) -> Void) -> (state: DeltaState, step: Step) {
        switch self {
        case .whole:
            return (.whole, .download(end: size))
        case .planned(let plan):
            return (self, .assemble(plan))
        case .learningHeader:
            let probe = min(size, BlobFetcher.headerProbe)
            if start < probe { return (self, .download(end: probe)) }
            guard let prefix = try? writer.prefix(Int(min(start, UInt64(ContainerHeader.maximumLength)))),
                  let preamble = try? ContainerHeader.preamble(from: prefix),
                  preamble.version >= 2, preamble.sealedLength == size, preamble.headerLength <= Self.maximumHeaderLength
            else { return (.whole, .download(end: size)) }
            if start < UInt64(preamble.headerLength) { return (self, .download(end: UInt64(preamble.headerLength))) }
            guard let bytes = try? writer.prefix(preamble.headerLength), let header = try? ContainerHeader(parsing: bytes),
                  let keyID = header.keyID, keyID == expected
            else { return (.whole, .download(end: size)) }
            let cached = CachedChunks(paths: cachedModels, keyID: keyID)
            guard !cached.isEmpty else { return (.whole, .download(end: size)) }
            let plan = DeltaPlan(header: header, size: size, cached: cached)
            skipped(plan.localBytes(from: start))
            CrashPoint.reach("delta-planned")
            return (.planned(plan), .assemble(plan))
        }
    }
}
