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
/// `coffer sync` runs) never update one collection at once. Released by ``release()`` or when the
/// process ends, however it ends.
///
/// A lock is only as good as the file it is on: if the file is removed (the app's "clear storage",
/// a user deleting the cache folder) while it is held, the next client creates a new file and locks
/// that, and both hold "the" lock. So a lock is taken only on the file its path names once it is held
/// (one removed while this client waited is opened again), and a holder asks ``isStillNamed()``
/// before each step that writes into the folder: false means another client may own it now.
final class FileLock: @unchecked Sendable {
    private let descriptor: Int32
    private let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
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
    static func acquireIfFree(_ path: String) throws -> FileLock? {
        while true {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw IOFailure(operation: .create, path: path, errno: errno) }
            var locked = flock(fd, LOCK_EX | LOCK_NB)
            while locked != 0, errno == EINTR { locked = flock(fd, LOCK_EX | LOCK_NB) }
            guard locked == 0 else {
                let code = errno
                close(fd)
                if code == EWOULDBLOCK { return nil }
                throw IOFailure(operation: .open, path: path, errno: code)
            }
            let lock = FileLock(descriptor: fd, path: path)
            if lock.isStillNamed() { return lock }
            lock.release()  // removed (or replaced) while this client opened it: lock what is there now
        }
    }

    /// Whether `path` still names the file this lock is on: false once the file (or its folder)
    /// was removed or replaced, when another client may hold a lock on a new file of that name.
    func isStillNamed() -> Bool {
        var held = stat(), named = stat()
        guard fstat(descriptor, &held) == 0, lstat(path, &named) == 0 else { return false }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }

    /// Releases the lock.
    func release() { close(descriptor) }
}
