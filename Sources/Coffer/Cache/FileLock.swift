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
/// (NFS): a file this process holds a lock on is not opened again, and so no second descriptor of
/// it is ever closed, which would drop the lock.
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
    /// another). Never waits.
    ///
    /// Looked up, opened, locked and recorded under the in-process table's mutex, so two tasks
    /// cannot both find the file free. A file a task of this process holds is not opened at all.
    static func acquireIfFree(_ path: String) throws -> FileLock? {
        try HeldLockFiles.withProcessTable { (table: inout HeldLockFiles) throws -> FileLock? in
            while true {
                // Held by a task of this process: not opened, since on NFS closing a second descriptor
                // would drop that task's lock. Nothing there (or a path that cannot be looked at): the
                // open creates the file, or says why not.
                if let named = FileIdentity(path: path), table.holds(named) { return nil }
                let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
                guard fd >= 0 else { throw IOFailure(operation: .create, path: path, errno: errno) }
                var info = stat()
                guard fstat(fd, &info) == 0 else {
                    let code = errno
                    table.park(fd)  // which file it is cannot be told: it may be a held one
                    throw IOFailure(operation: .stat, path: path, errno: code)
                }
                let opened = FileIdentity(info)
                guard !table.holds(opened) else {
                    // The path named a held file again between the look and the open (linked
                    // there by someone else): this descriptor must not be closed while it is held.
                    table.park(fd)
                    continue
                }
                var locked = flock(fd, LOCK_EX | LOCK_NB)
                while locked != 0, errno == EINTR { locked = flock(fd, LOCK_EX | LOCK_NB) }
                guard locked == 0 else {
                    let code = errno
                    close(fd)  // not a held file: closing drops no lock of this process
                    if code == EWOULDBLOCK { return nil }
                    throw IOFailure(operation: .open, path: path, errno: code)
                }
                guard FileIdentity(path: path) == opened else {
                    close(fd)  // removed (or replaced) while this client opened it: lock what is there now
                    continue
                }
                table.record(opened)
                return FileLock(descriptor: fd, path: path, file: opened)
            }
        }
    }

    /// Whether `path` still names the file this lock is on: false once the file (or its folder)
    /// was removed or replaced, when another client may hold a lock on a new file of that name.
    func isStillNamed() -> Bool { FileIdentity(path: path) == file }

    /// Releases the lock: closes its descriptor and removes the file from the in-process table,
    /// both under the table's mutex. A second call does nothing.
    func release() {
        HeldLockFiles.withProcessTable { (table: inout HeldLockFiles) -> Void in
            guard !released else { return }
            released = true
            table.release(file, descriptor: descriptor)
        }
    }
}
