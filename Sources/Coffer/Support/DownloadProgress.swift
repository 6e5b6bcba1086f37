import Foundation

/// The byte counts of one update, shared by everyone waiting for it; each waiter's `Progress`
/// is told of every change.
final class DownloadProgress: @unchecked Sendable {
    private let lock = NSLock()
    private var total: UInt64 = 0
    private var done: UInt64 = 0
    private var begun = false
    private var observers: [ObjectIdentifier: Foundation.Progress] = [:]

    /// The bytes to download are known. Once more in the same update (the repair of the version
    /// in force after the new version's download failed), they are more bytes to do: the total
    /// grows past what is done, and the progress never goes backwards.
    func begin(total: UInt64) {
        let (total, observers) = lock.withLock { () -> (UInt64, [Foundation.Progress]) in
            self.total = begun ? done.addingSaturated(total) : total
            begun = true
            return (self.total, Array(self.observers.values))
        }
        for progress in observers { progress.totalUnitCount = Int64(clamping: total) }
    }

    /// `count` of the bytes counted in ``begin(total:)`` need not travel after all (a delta
    /// update copies them from models already cached).
    func lessToDownload(_ count: UInt64) { changeTotal { $0.subtractingSaturated(count) } }

    /// `count` bytes more than counted travel after all (a delta update that falls back to the
    /// whole download, a model fetched once more after its SHA-256 did not match).
    func moreToDownload(_ count: UInt64) { changeTotal { $0.addingSaturated(count) } }

    private func changeTotal(_ change: (UInt64) -> UInt64) {
        let (total, observers) = lock.withLock { () -> (UInt64, [Foundation.Progress]) in
            self.total = change(self.total)
            return (self.total, Array(self.observers.values))
        }
        for progress in observers { progress.totalUnitCount = Int64(clamping: max(total, 1)) }
    }

    /// `count` more bytes are done.
    func add(_ count: UInt64) {
        let (done, observers) = lock.withLock { () -> (UInt64, [Foundation.Progress]) in
            self.done += count
            return (self.done, Array(self.observers.values))
        }
        for progress in observers { progress.completedUnitCount = Int64(clamping: done) }
    }

    /// `progress` follows this update from now on.
    func observe(_ progress: Foundation.Progress) {
        let (total, done) = lock.withLock { () -> (UInt64, UInt64) in
            observers[ObjectIdentifier(progress)] = progress
            return (self.total, self.done)
        }
        progress.totalUnitCount = Int64(clamping: max(total, 1))
        progress.completedUnitCount = Int64(clamping: done)
    }

    /// `progress` no longer follows it.
    func forget(_ progress: Foundation.Progress) {
        _ = lock.withLock { observers.removeValue(forKey: ObjectIdentifier(progress)) }
    }
}
