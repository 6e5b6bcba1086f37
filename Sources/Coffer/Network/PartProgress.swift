import CofferFormat
import Foundation

/// How far a part file's bytes are on disk, for a reader that follows a download as it arrives
/// (``GrowingPartSource``): ``PartWriter`` moves it forward, readers wait on it.
///
/// The bytes below ``end`` never change while a download goes forward. A download that starts
/// its file again (a server that ignored Range, a delta whose result was refused) ``rewind()``s:
/// every reader then stops for good, because what it read may not be what the verified file
/// holds. ``close()`` says no more bytes come; readers still waiting then stop.
final class PartProgress: @unchecked Sendable {
    /// Why a reader stopped.
    enum Stop: Error, Equatable {
        /// The download started its file again: bytes already read may differ from the final file.
        case rewound
        /// The download ended before the bytes asked for arrived.
        case closed
    }

    private let condition = NSCondition()
    private var end: UInt64 = 0
    private var rewound = false
    private var closed = false

    /// The bytes on disk now reach `end` (never less than before, unless rewound).
    func advance(to end: UInt64) {
        condition.withLock {
            guard !rewound, end > self.end else { return }
            self.end = end
            condition.broadcast()
        }
    }

    /// The file starts again from nothing: readers stop.
    func rewind() {
        condition.withLock {
            rewound = true
            condition.broadcast()
        }
    }

    /// No more bytes come (the download finished or failed): readers still waiting stop.
    func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }

    /// Whether the download started its file again since this was made.
    var wasRewound: Bool { condition.withLock { rewound } }

    /// Waits until the bytes below `needed` are on disk.
    func wait(until needed: UInt64) throws(Stop) {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if rewound { throw .rewound }
            if end >= needed { return }
            if closed { throw .closed }
            condition.wait()
        }
    }
}
