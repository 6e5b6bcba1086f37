import CofferFormat
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The files this process holds, or is taking, a ``FileLock`` on, by device and inode: the lock
/// between tasks of one process, which `flock` alone is not everywhere.
///
/// On NFS (Linux since 2.6.12, and macOS) `flock` is emulated with POSIX `fcntl` record locks,
/// which belong to the process: two descriptors of one process never exclude each other, and
/// closing any descriptor of a file drops every lock the process holds on it. So one task at a
/// time may lock a file (``claim(_:descriptor:)``), and only that task closes its descriptor while
/// the file is in the table; another descriptor of a file in the table stays open until that file
/// leaves it, and one that may be of any (``park(_:)``: its `fstat` failed) until no file is.
///
/// The table is in memory only, and its mutex (``withProcessTable(_:)``) is held for moments: the
/// system calls that may wait on a slow or network file system (`open`, `stat`, `flock` and the
/// holder's `close`) run outside it, so that one stalled mount does not stall every lock of the
/// process. A parked descriptor is closed under the mutex, which is rare (a race, or an `fstat`
/// that failed): outside, a task could claim its file and lock it just before the `close` dropped
/// that lock.
struct HeldLockFiles {
    /// The files a task holds, or is taking, the lock on.
    private var held: Set<FileIdentity> = []
    /// Descriptors of a file in `held` that lost its claim, closed when that file leaves `held`:
    /// kept until no file at all was held, they piled up for as long as the process held any lock
    /// (the SDK holds its cache's through whole downloads), one for each task that lost a race.
    private var parkedByFile: [FileIdentity: [Int32]] = [:]
    /// Descriptors that may be of any file in `held` (their `fstat` failed), closed once `held` is
    /// empty.
    private var parked: [Int32] = []

    private static let mutex = NSLock()
    nonisolated(unsafe) private static var process = HeldLockFiles()

    /// `body`'s result, run with the process's table locked. Only work on the table belongs in
    /// `body`: no `open`, `stat` or `flock`, which may wait on the file system while every other
    /// lock of the process waits for the mutex.
    static func withProcessTable<T>(_ body: (inout HeldLockFiles) throws -> T) rethrows -> T {
        try Self.mutex.withLock { try body(&Self.process) }
    }

    /// Whether a task of this process holds, or is taking, the lock on `file`.
    func holds(_ file: FileIdentity) -> Bool { held.contains(file) }

    /// Makes the calling task the only one of this process that may lock `file`, through
    /// `descriptor` (open on it), and says true; until ``forget(_:)``, every other task finds the
    /// file held. When another task holds or is taking it, keeps `descriptor` open (closing it could
    /// drop that task's lock) until `file` is forgotten, and says false.
    mutating func claim(_ file: FileIdentity, descriptor: Int32) -> Bool {
        guard held.insert(file).inserted else {
            parkedByFile[file, default: []].append(descriptor)
            return false
        }
        return true
    }

    /// Keeps `descriptor`, which may be of any held file (its identity unknown), open while any
    /// file is held (closing it could drop that lock); closes it at once when none is.
    mutating func park(_ descriptor: Int32) {
        if held.isEmpty { close(descriptor) } else { parked.append(descriptor) }
    }

    /// Forgets the claim on `file`, whose descriptor its claimant has closed already: closed
    /// first, while the file was still in the table, so that no other task of this process locked
    /// the file while that descriptor still held (or could still drop) the process's lock on it.
    /// The descriptors of `file` that lost their claim are closed with it (no lock of the process on
    /// `file` is left to drop, and no task can claim it before the mutex is released); once no file
    /// is held, those parked without an identity too.
    mutating func forget(_ file: FileIdentity) {
        held.remove(file)
        for spare in parkedByFile.removeValue(forKey: file) ?? [] { close(spare) }
        guard held.isEmpty else { return }
        for spare in parked { close(spare) }
        parked.removeAll()
    }
}
