import CofferFormat
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The files this process holds a ``FileLock`` on, by device and inode: the lock between tasks of
/// one process, which `flock` alone is not everywhere.
///
/// On NFS (Linux since 2.6.12, and macOS) `flock` is emulated with POSIX `fcntl` record locks,
/// which belong to the process: two descriptors of one process never exclude each other, and
/// closing any descriptor of a file drops every lock the process holds on it. So a file in this
/// table is never opened again by ``FileLock`` until its holder releases it, and a descriptor that
/// turns out to be of such a file all the same (``park(_:)``) stays open until no lock is held.
/// ``FileLock/acquireIfFree(_:)`` and ``FileLock/release()`` do their work in
/// ``withProcessTable(_:)``, so that two tasks cannot both find a file free.
struct HeldLockFiles {
    private var held: Set<FileIdentity> = []
    /// Descriptors that may be of a held file, closed once no lock is held.
    private var parked: [Int32] = []

    private static let mutex = NSLock()
    nonisolated(unsafe) private static var process = HeldLockFiles()

    /// `body`'s result, run with the process's table locked. Only calls that never wait (no
    /// blocking `flock`) belong in `body`.
    static func withProcessTable<T>(_ body: (inout HeldLockFiles) throws -> T) rethrows -> T {
        try Self.mutex.withLock { try body(&Self.process) }
    }

    /// Whether a lock of this process is on `file`.
    func holds(_ file: FileIdentity) -> Bool { held.contains(file) }

    /// Records that a lock of this process is now on `file`.
    mutating func record(_ file: FileIdentity) { held.insert(file) }

    /// Keeps `descriptor`, which may be of a held file, open while any lock is held (closing it
    /// could drop that lock); closes it at once when none is.
    mutating func park(_ descriptor: Int32) {
        if held.isEmpty { close(descriptor) } else { parked.append(descriptor) }
    }

    /// Closes `descriptor`, the one holding the lock on `file`, and forgets the lock: closed first,
    /// under the table's mutex, so that no task opens the file while this descriptor still holds
    /// the process's lock on it. Once no lock is held, the parked descriptors are closed too.
    mutating func release(_ file: FileIdentity, descriptor: Int32) {
        close(descriptor)
        held.remove(file)
        guard held.isEmpty else { return }
        for spare in parked { close(spare) }
        parked.removeAll()
    }
}
