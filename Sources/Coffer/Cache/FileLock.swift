import CofferFormat
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on a file, so that two processes (an app and its extension, or two
/// `coffer sync` runs) never update one collection at once, and an in-process table
/// (``HeldLockFiles``) so that two tasks of one process never do either. Released by
/// ``release()`` or when the process ends, however it ends.
///
/// The table is what keeps tasks apart where `flock` is emulated with process-wide `fcntl` locks
/// (NFS): a file a task of this process holds (or is taking) a lock on is claimed by that task, so
/// no other task locks it, and no descriptor of it but the holder's is closed, which would drop the
/// lock. The table's mutex is held only while the table changes: the `open`, `fstat`, `flock`,
/// `lstat` and the holder's `close`, which may wait on a slow or network file system, run outside
/// it, so that a stalled mount stalls only the locks on it.
///
/// A lock is only as good as the file it is on: if the file is removed (the app's "clear storage",
/// a user deleting the cache folder) while it is held, the next client creates a new file and locks
/// that, and both hold "the" lock. So a lock is taken only on the file its path names once it is held
/// (one removed while this client waited is opened again), and a holder asks ``isStillNamed()``
/// before each step that writes into the folder: false means another client may own it now.
final class FileLock: @unchecked Sendable {
    private let descriptor: Int32
    private let path: String
    /// The file the lock is on (the descriptor's: it stays that file whatever `path` names later).
    private let file: FileIdentity
    /// Set by the first ``release()``, under the table's mutex: a second call closes nothing.
    private var released = false

    private init(descriptor: Int32, path: String, file: FileIdentity) {
        self.descriptor = descriptor
        self.path = path
        self.file = file
    }

    /// Waits (polling, cancellably) until the lock on `path` is held.
    static func acquire(_ path: String) async throws -> FileLock {
        while true {
            if let lock = try acquireIfFree(path) { return lock }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
    }

    /// The lock on `path` if no one holds it; nil when another client does (in this process or
    /// another), or when another task of this process is taking it at that moment. Never waits.
    ///
    /// The file is opened, then claimed in the in-process table by the identity of what was opened
    /// (not by what the path names, which a rename may change meanwhile), then locked: two tasks
    /// cannot both claim one file, and a descriptor of a file another task claimed is kept open
    /// until that claim ends (``HeldLockFiles/forget(_:)`` closes it). From the claim on, every way out either returns the lock or closes the descriptor and
    /// then gives the claim up. Only the look-up in and changes to the table hold its mutex.
    static func acquireIfFree(_ path: String) throws -> FileLock? {
        while true {
            // Held by a task of this process: not opened, since on NFS closing a second descriptor
            // would drop that task's lock (and a waiter polling would park one at every try).
            // Nothing there (or a path that cannot be looked at): the open creates the file, or
            // says why not.
            if let named = FileIdentity(path: path), HeldLockFiles.withProcessTable({ $0.holds(named) }) { return nil }
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw IOFailure(operation: .create, path: path, errno: errno) }
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                let code = errno
                // Which file it is cannot be told: it may be a held one.
                HeldLockFiles.withProcessTable { $0.park(fd) }
                throw IOFailure(operation: .stat, path: path, errno: code)
            }
            let opened = FileIdentity(info)
            // Claimed by another task since the look (which took it first, or the path named it
            // again, linked there by someone else): the claim parked this descriptor; look again.
            guard HeldLockFiles.withProcessTable({ $0.claim(opened, descriptor: fd) }) else { continue }
            var locked = flock(fd, LOCK_EX | LOCK_NB)
            while locked != 0, errno == EINTR { locked = flock(fd, LOCK_EX | LOCK_NB) }
            let code = errno
            // Locked, and still the file the path names (not removed or replaced while this client
            // opened it): the lock. Otherwise the claim ends: the descriptor is closed first, while
            // the file is still claimed, so that no task of this process locks it in between
            // (closing drops no lock of another task: none may hold a claimed file).
            guard locked == 0, FileIdentity(path: path) == opened else {
                close(fd)
                HeldLockFiles.withProcessTable { $0.forget(opened) }
                if locked == 0 { continue }  // removed or replaced: lock what is there now
                if code == EWOULDBLOCK { return nil }
                throw IOFailure(operation: .open, path: path, errno: code)
            }
            return FileLock(descriptor: fd, path: path, file: opened)
        }
    }

    /// Whether `path` still names the file this lock is on: false once the file (or its folder)
    /// was removed or replaced, when another client may hold a lock on a new file of that name.
    func isStillNamed() -> Bool { FileIdentity(path: path) == file }

    /// Releases the lock: closes its descriptor and then removes the file from the in-process
    /// table, so that no task of this process locks the file while this descriptor still holds the
    /// process's lock on it. The `close` runs outside the table's mutex; whether this is the first
    /// call is decided under it. A second call does nothing.
    func release() {
        let first = HeldLockFiles.withProcessTable { (_: inout HeldLockFiles) -> Bool in
            guard !released else { return false }
            released = true
            return true
        }
        guard first else { return }
        close(descriptor)
        HeldLockFiles.withProcessTable { $0.forget(file) }
    }
}
