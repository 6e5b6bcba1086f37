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
final class FileLock: @unchecked Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Waits (polling, cancellably) until the lock on `path` is held.
    static func acquire(_ path: String) async throws -> FileLock {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw IOFailure(operation: .create, path: path, errno: errno) }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                let code = errno
                close(fd)
                throw IOFailure(operation: .open, path: path, errno: code)
            }
            do {
                try await Task.sleep(nanoseconds: 50_000_000)
            } catch {
                close(fd)
                throw error
            }
        }
        return FileLock(descriptor: fd)
    }

    /// Releases the lock.
    func release() { close(descriptor) }
}
