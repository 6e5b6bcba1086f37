import CofferFormat
import Foundation

/// How a version 2 container is assembled from what a cache holds and what must be downloaded:
/// its bytes cut into runs, each copied from a cached container or fetched with one Range request
/// of the new blob (neighbouring missing chunks are one run, so a changed tensor is one request;
/// neighbouring chunks that are neighbours in a cached file too are one copy).
///
/// The runs cover the container from byte 0 to its end without gaps. The header itself is always
/// downloaded (it is where the plan came from).
struct DeltaPlan: Sendable, Equatable {
    /// Where a run's bytes come from.
    enum Source: Sendable, Equatable {
        /// Bytes of the new blob, downloaded.
        case remote
        /// Bytes of a cached container, copied from this offset.
        case local(path: String, offset: UInt64)
    }

    /// A stretch of the new container.
    struct Run: Sendable, Equatable {
        let range: Range<UInt64>
        let source: Source

        /// Whether the next stretch, from `next`, extends this run: both downloaded, or both copied
        /// from one cached file where the bytes follow on (unchanged neighbours stay neighbours).
        func continues(with next: Source) -> Bool {
            switch (source, next) {
            case (.remote, .remote):
                return true
            case (.local(let path, let offset), .local(let nextPath, let nextOffset)):
                return path == nextPath && offset + (range.upperBound - range.lowerBound) == nextOffset  // not `range.count`: an Int, 32 bits on watchOS
            default:
                return false
            }
        }
    }

    let runs: [Run]

    /// A plan of these runs (which must cover the container from byte 0 without gaps).
    init(runs: [Run]) {
        self.runs = runs
    }

    /// Plans `header`'s container (`size` bytes) against `cached`.
    init(header: ContainerHeader, size: UInt64, cached: CachedChunks) {
        var runs: [Run] = [Run(range: 0..<UInt64(header.encodedLength), source: .remote)]
        let table = header.chunkTable?.entries ?? []
        for (index, entry) in table.enumerated() {
            let start = header.sealedOffset(ofChunk: UInt64(index))
            let range = start..<start + UInt64(entry.length) + UInt64(ContainerHeader.tagLength)
            let source: Source = cached[entry.id].map { .local(path: $0.path, offset: $0.offset) } ?? .remote
            if let last = runs.last, last.range.upperBound == range.lowerBound, last.continues(with: source) {
                runs[runs.count - 1] = Run(range: last.range.lowerBound..<range.upperBound, source: last.source)
            } else {
                runs.append(Run(range: range, source: source))
            }
        }
        // A table that does not reach the end (it always does for a valid header) leaves the rest remote.
        if let end = runs.last?.range.upperBound, end < size { runs.append(Run(range: end..<size, source: .remote)) }
        self.runs = runs
    }

    /// The runs from `offset` on, the first cut to begin there (a download resumed mid-run).
    func runs(from offset: UInt64) -> [Run] {
        runs.compactMap { run in
            guard run.range.upperBound > offset else { return nil }
            guard run.range.lowerBound < offset else { return run }
            let skip = offset - run.range.lowerBound
            switch run.source {
            case .remote:
                return Run(range: offset..<run.range.upperBound, source: .remote)
            case .local(let path, let start):
                return Run(range: offset..<run.range.upperBound, source: .local(path: path, offset: start.addingSaturated(skip)))
            }
        }
    }

    /// Bytes from `offset` on that are copied from the cache instead of downloaded.
    func localBytes(from offset: UInt64 = 0) -> UInt64 {
        runs.reduce(0) { total, run in
            run.source == .remote || run.range.upperBound <= offset ? total : total + run.range.upperBound - max(run.range.lowerBound, offset)
        }
    }

    /// How many Range requests the downloaded runs take (at least; long runs are fetched in pieces).
    var remoteRuns: Int { runs.filter { $0.source == .remote }.count }
}
