import Foundation

extension ContentChunker {
    /// Below this many bytes a thread, the plaintext is cut on one thread.
    static let parallelStretch: UInt64 = 16 << 20

    /// The same chunk lengths as ``lengths(of:segmentStarts:gear:)``, cut by up to `threads`
    /// threads at once, each cutting at least `minimumStretch` bytes (tests make it small).
    ///
    /// The plaintext is split into equal stretches and each thread cuts its own from the stretch's
    /// first byte, as if a chunk started there. Only the first stretch's cut is surely the real one;
    /// the real cut, continued past a stretch's end one chunk at a time, meets the next thread's cut
    /// at a shared boundary (a chunk's end depends only on where it starts and on the bytes, so from
    /// a shared start on both cuts agree), usually within a chunk or two, and from there takes that
    /// thread's boundaries as they are. A stretch never met in time is cut again on the calling
    /// thread, so the result is always the one-thread cut.
    static func lengths(
        of source: some PlaintextSource, segmentStarts: [UInt64] = [], gear: [UInt64], threads: Int,
        minimumStretch: UInt64 = parallelStretch
    ) throws -> [UInt32] {
        let total = source.length
        let count = Int(min(UInt64(max(1, threads)), total / max(1, minimumStretch)))
        guard count > 1 else { return try lengths(of: source, segmentStarts: segmentStarts, gear: gear) }
        let segments = Segments(starts: segmentStarts, total: total)
        let stretch = total / UInt64(count)
        let splits = (0..<count).map { UInt64($0) * stretch } + [total]
        let chains = Slots(count: count, initial: Chain(starts: [], next: 0))
        let failure = FirstFailure()
        DispatchQueue.concurrentPerform(iterations: count) { index in
            do {
                chains.store(try chain(of: source, from: splits[index], until: splits[index + 1], segments: segments, gear: gear,
                                       stopping: failure), at: index)
            } catch {
                failure.record(error)
            }
        }
        if let error = failure.error { throw error }
        let found = chains.take()

        var window = Window(source: source)
        defer { window.release() }
        var starts = found[0].starts
        var next = found[0].next
        for index in 1..<count {
            let chain = found[index]
            while next < splits[index + 1] {
                if let met = chain.position(of: next) {
                    starts.append(contentsOf: chain.starts[met...])
                    next = chain.next
                    break
                }
                try Cancellation.check()
                starts.append(next)
                next += UInt64(try cut(from: next, before: segments.end(after: next), in: &window, gear: gear))
            }
        }
        return lengths(of: starts, total: total)
    }

    /// The lengths of the chunks that start at `starts` (sorted, the first 0) in `total` bytes.
    static func lengths(of starts: [UInt64], total: UInt64) -> [UInt32] {
        var lengths: [UInt32] = []
        lengths.reserveCapacity(starts.count)
        for (index, start) in starts.enumerated() {
            let end = index + 1 < starts.count ? starts[index + 1] : total
            lengths.append(UInt32(end - start))
        }
        return lengths
    }

    /// Cuts from `start` (taken as a chunk's start) until a chunk starts at or after `stop`; gives
    /// up early when another thread failed (`failure`) or a stop was requested. From 0 to the end,
    /// this is the one-thread cut.
    static func chain(
        of source: some PlaintextSource, from start: UInt64, until stop: UInt64, segments: Segments, gear: [UInt64],
        stopping failure: FirstFailure? = nil
    ) throws -> Chain {
        var window = Window(source: source)
        defer { window.release() }
        var starts: [UInt64] = []
        starts.reserveCapacity(Int(min((stop - start) / UInt64(averageLength) * 2 + 16, 1 << 20)))
        var position = start
        while position < stop {
            try Cancellation.check()
            if failure?.isSet == true { break }
            starts.append(position)
            position += UInt64(try cut(from: position, before: segments.end(after: position), in: &window, gear: gear))
        }
        return Chain(starts: starts, next: position)
    }

    /// One thread's cut of its stretch: where its chunks start, and where the chunk after them does.
    struct Chain: Sendable {
        let starts: [UInt64]
        let next: UInt64

        /// The index of `offset` among ``starts`` (sorted), or nil.
        func position(of offset: UInt64) -> Int? {
            var low = 0
            var high = starts.count
            while low < high {
                let middle = (low + high) / 2
                if starts[middle] < offset { low = middle + 1 } else { high = middle }
            }
            return low < starts.count && starts[low] == offset ? low : nil
        }
    }

    /// The offsets where a chunk must start whatever the content, for finding a segment's end.
    struct Segments: Sendable {
        private let starts: [UInt64]
        private let total: UInt64

        init(starts: [UInt64], total: UInt64) {
            self.starts = starts.filter { $0 > 0 && $0 < total }.sorted()
            self.total = total
        }

        /// Where the segment holding `offset` ends: the first forced start after it, or the end.
        func end(after offset: UInt64) -> UInt64 {
            var low = 0
            var high = starts.count
            while low < high {
                let middle = (low + high) / 2
                if starts[middle] <= offset { low = middle + 1 } else { high = middle }
            }
            return low < starts.count ? starts[low] : total
        }
    }
}
