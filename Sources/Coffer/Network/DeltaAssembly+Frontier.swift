import Foundation

extension DeltaAssembly {
    /// How far a delta assembly has written: below ``copied`` every cached byte is in the part
    /// file, below ``downloaded`` every downloaded byte; so below the lesser of the two, every byte.
    /// The first ``Stop`` is kept and every waiting thread woken.
    final class Frontier: @unchecked Sendable {
        private let condition = NSCondition()
        private var copied: UInt64
        private var downloaded: UInt64
        private var stoppedBy: Stop?
        private let reached: @Sendable (UInt64) -> Void

        /// The frontiers of `runs` (the rest of a plan, ending at `end`) before anything is written;
        /// `reached` hears how far every byte is on disk whenever that grows.
        init(_ runs: [DeltaPlan.Run], end: UInt64, reached: @escaping @Sendable (UInt64) -> Void) {
            copied = runs.first { $0.source != .remote }?.range.lowerBound ?? end
            downloaded = runs.first { $0.source == .remote }?.range.lowerBound ?? end
            self.reached = reached
        }

        /// Where the frontier of one kind of run stands once run `index` of `runs` is done: at the
        /// start of the next run of that kind (downloaded if `remote`, else cached), or at `end`.
        static func after(_ index: Int, in runs: [DeltaPlan.Run], remote: Bool, end: UInt64) -> UInt64 {
            runs[(index + 1)...].first { ($0.source == .remote) == remote }?.range.lowerBound ?? end
        }

        /// Cached bytes are copied up to `offset` (see ``after(_:in:remote:end:)``).
        func copied(to offset: UInt64) {
            advance { if offset > $0.copied { $0.copied = offset } }
        }

        /// Downloaded bytes are written up to `offset`.
        func downloaded(to offset: UInt64) {
            advance { if offset > $0.downloaded { $0.downloaded = offset } }
        }

        private func advance(_ change: (Frontier) -> Void) {
            let complete = condition.withLock {
                change(self)
                condition.broadcast()
                return min(copied, downloaded)
            }
            reached(complete)
        }

        /// Waits until the downloaded bytes below `offset` are written; false if the assembly stopped.
        func waitDownloaded(until offset: UInt64) -> Bool {
            condition.withLock {
                while stoppedBy == nil, downloaded < offset { condition.wait() }
                return stoppedBy == nil
            }
        }

        /// Stops the assembly (the first reason is kept).
        func stop(_ reason: Stop) {
            condition.withLock {
                if stoppedBy == nil { stoppedBy = reason }
                condition.broadcast()
            }
        }

        /// Whether the assembly stopped.
        var stopped: Bool { condition.withLock { stoppedBy != nil } }

        /// Why the assembly stopped, if it did.
        var reason: Stop? { condition.withLock { stoppedBy } }
    }
}
