#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `read(2)`, named apart from ``BoundedFile/read(_:atMost:)``.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// Small secret files (passphrases, key files, API tokens) read with a hard cap on the
/// bytes taken: a file that never ends (`/dev/zero`, a pipe) or a huge one costs at most the cap.
package enum BoundedFile {
    /// The first `limit` bytes of the file at `path` (fewer if it ends sooner), read in order with
    /// plain `read` so pipes (`--passphrase-file <(...)`) work; nothing past `limit` is read.
    ///
    /// - Throws: ``IOFailure`` when the file cannot be opened or read (a folder, for instance).
    package static func read(_ path: String, atMost limit: Int) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { throw IOFailure(operation: .open, path: path, errno: errno) }
        defer { close(descriptor) }
        return try read(descriptor: descriptor, atMost: limit, path: path)
    }

    /// ``read(_:atMost:)``, after `check` accepted what was opened (its `fstat`), so that the
    /// checked file is the one read even if the path is replaced meanwhile. Opened without
    /// blocking, so a FIFO at `path` reaches `check` instead of waiting for a writer. With
    /// `followingLinks` false, a symbolic link at `path` is not followed (`O_NOFOLLOW`): the open
    /// fails with `ELOOP`.
    ///
    /// - Throws: what `check` throws, or ``IOFailure`` when the file cannot be opened or read.
    package static func read(_ path: String, atMost limit: Int, followingLinks: Bool = true,
                             checking check: (stat) throws -> Void) throws -> [UInt8] {
        let flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | (followingLinks ? 0 : O_NOFOLLOW)
        var descriptor = open(path, flags | O_NONBLOCK)
        if descriptor < 0, errno == EAGAIN || errno == EWOULDBLOCK {
            // A file another process holds a lease on (an NFS or Samba server's own file) refuses a
            // non-blocking open; a FIFO never does, so the blocking open waits only for the lease.
            descriptor = open(path, flags)
        }
        guard descriptor >= 0 else { throw IOFailure(operation: .open, path: path, errno: errno) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw IOFailure(operation: .read, path: path, errno: errno) }
        try check(info)
        let status = fcntl(descriptor, F_GETFL)
        guard status >= 0, fcntl(descriptor, F_SETFL, status & ~O_NONBLOCK) == 0 else {
            throw IOFailure(operation: .read, path: path, errno: errno)
        }
        return try read(descriptor: descriptor, atMost: limit, path: path)
    }

    /// ``read(_:atMost:)``, with `-` for standard input, read from its descriptor (reopening
    /// `/dev/stdin` fails when it is a socket).
    package static func read(fileOrStandardInput path: String, atMost limit: Int) throws -> [UInt8] {
        guard path == "-" else { return try read(path, atMost: limit) }
        return try read(descriptor: STDIN_FILENO, atMost: limit, path: "standard input")
    }

    /// The first `limit` bytes readable from `descriptor`.
    private static func read(descriptor: Int32, atMost limit: Int, path: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: limit)
        var done = 0
        while done < limit {
            let n = bytes.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress! + done, limit - done) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                throw IOFailure(operation: .read, path: path, errno: code)
            }
            if n == 0 { break }
            done += n
        }
        bytes.removeLast(limit - done)
        return bytes
    }
}
