#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import CofferFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The part file of one download: where the next byte goes, and the hash so far.
///
/// URLSession on Linux hands a body over in 16 KiB pieces; they are gathered into 1 MiB writes,
/// each hashed on another thread (``QueuedSHA256``) while the next one gathers.
final class PartWriter: PieceSink, @unchecked Sendable {
    /// A body that cannot be the bytes asked for.
    struct Refusal: Error { let failure: SyncFailure }

    private let lock = NSLock()
    private let file: PositionalFile
    private let path: String
    private let expectedSize: UInt64
    /// Hashed off the receiving thread, one gathered MiB at a time.
    private let hasher = QueuedSHA256()
    private var written: UInt64 = 0
    /// How many answers (a `200` to a Range request) started the file again, dropping bytes it had.
    private var restarts = 0
    private var checked = false
    /// Two gathering buffers: one fills while the other's bytes are hashed.
    private let buffers = GatherBuffers()
    /// The hashing of each buffer's last bytes handed over, until it is known to be done.
    private var hashing: [DispatchWorkItem?] = [nil, nil]
    private var current = 0
    private var pending: UnsafeMutableRawBufferPointer { buffers.halves[current] }
    private var pendingCount = 0
    /// How many of the pending bytes were already handed to the hasher (``finish()`` hashes them unwritten).
    private var pendingHashed = 0
    /// A reader following the download (``GrowingPartSource``), told how far the bytes on disk reach.
    private var progress: PartProgress?

    deinit {
        // The buffers are freed after this, once no hashing reads them.
        for work in hashing { work?.wait() }
    }

    /// Opens (or creates, 0600) the part file and hashes what an earlier try left in it.
    init(path: String, expectedSize: UInt64) throws {
        file = try Self.openPart(path)
        self.path = path
        self.expectedSize = expectedSize
        var keep = try file.size()
        // A delta update killed while it assembled the file may leave holes (``DeltaAssembly``
        // writes downloaded runs beside copied ones): the bytes past the first hole are dropped.
        // Bytes before it may still be zeros never written (a page half written beside a copied
        // one leaves no hole); the SHA-256 finds those, and BlobFetcher then downloads once more.
        // A file longer than the model is no earlier try of it.
        let filled = keep > expectedSize ? 0 : Self.writtenPrefix(file.descriptor, size: keep)
        if filled < keep {
            try file.truncate(to: filled)
            keep = filled
        }
        var resumed = SHA256()
        try file.hash(upTo: keep, into: &resumed, stoppingWhenCancelled: true)
        written = keep
        hasher.state = resumed
    }

    var offset: UInt64 { lock.withLock { written } }

    /// How many answers started the file again (a server that ignored Range): a piece that did so
    /// and then failed made no progress, however far it wrote.
    var restartCount: Int { lock.withLock { restarts } }

    /// The part file at `path`, opened for reading and writing, or created (0600). What is there
    /// and is not a regular file — a link (never followed), a pipe, a socket — is no earlier try:
    /// it is removed and the file created anew, so that it cannot fail, or hang, every update
    /// until someone removes it by hand.
    private static func openPart(_ path: String) throws -> PositionalFile {
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0o600)
        var info = stat()
        if fd >= 0, fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
            // Blocking again: a regular file never waits, but later reads and writes expect whole counts.
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
                let code = errno
                close(fd)
                throw IOFailure(operation: .open, path: path, errno: code)
            }
            return PositionalFile(adopting: fd, path: path)
        }
        let code = fd >= 0 ? EINVAL : errno
        if fd >= 0 { close(fd) }
        // ELOOP: a link (O_NOFOLLOW); ENXIO (Linux) or EOPNOTSUPP (Darwin): a socket.
        guard fd >= 0 || code == ELOOP || code == ENXIO || code == EOPNOTSUPP else {
            throw IOFailure(operation: .create, path: path, errno: code)
        }
        guard unlink(path) == 0 else { throw IOFailure(operation: .remove, path: path, errno: errno) }
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw IOFailure(operation: .create, path: path, errno: errno) }
        return PositionalFile(adopting: fd, path: path)
    }

    /// From now on `progress` hears how far the bytes on disk reach, and whether the file starts again.
    func attach(_ progress: PartProgress) {
        lock.withLock {
            self.progress = progress
            publish()
        }
    }

    /// Tells the follower how far the bytes on disk reach (the lock is held).
    private func publish() {
        progress?.advance(to: written - UInt64(pendingCount))
    }

    /// A new request starts: its answer is checked again on its first bytes.
    func beginPiece() { lock.withLock { checked = false } }

    /// A server that ignores Range sends the whole file; the part file then starts again.
    var takesWholeAnswer: Bool { true }

    /// Writes a piece of the answer to `bytes=first-last`, checking on the first piece that the
    /// answer is those bytes (206 with a matching Content-Range, or the whole file as 200).
    func accept(_ data: Data, response: HTTPURLResponse, first: UInt64, last: UInt64, total: UInt64) throws {
        try lock.withLock {
            if !checked {
                try PieceAnswer.check(response, body: data, first: first, last: last, total: total, whole: true)
                if response.statusCode == 200 {
                    // Everything comes again: start from the first byte.
                    if written > 0 { restarts += 1 }
                    hasher.state = SHA256()
                    written = 0
                    pendingCount = 0
                    pendingHashed = 0
                    progress?.rewind()
                    try file.truncate(to: 0)
                }
                checked = true
            }
            let limit = response.statusCode == 200 ? total : last + 1
            guard written + UInt64(data.count) <= limit else {
                throw Refusal(failure: .server(.unreachable("the server sent more bytes than asked for")))
            }
            try data.withUnsafeBytes { try store($0) }
        }
    }

    /// Hands the rest of the file to a delta update's assembly (``DeltaAssembly``): the bytes
    /// gathered so far are written, and the file, its length and the hash so far returned. Nothing
    /// else may write until ``endAssembly(at:hash:)``; if that is never called (the assembly
    /// failed), the offset stays where it was.
    func beginAssembly() throws -> (file: PositionalFile, start: UInt64, hash: SHA256) {
        try lock.withLock {
            try flushPending()
            return (file, written, hasher.state)
        }
    }

    /// An assembly's bytes are on disk up to `end`: a follower may read them.
    func reach(_ end: UInt64) {
        lock.withLock { progress?.advance(to: end) }
    }

    /// The assembly stopped for a whole download, which writes its bytes again: a follower stops.
    func abandonAssembly() {
        lock.withLock { progress?.rewind() }
    }

    /// The assembly wrote every byte up to `end` (at most the model's size), and `hash` covers them.
    func endAssembly(at end: UInt64, hash: SHA256) {
        lock.withLock {
            hasher.state = hash
            written = min(end, expectedSize)
            publish()
        }
    }

    /// How many bytes of the open file `descriptor` to keep: all of them, unless it has a hole (a
    /// delta update killed mid-run) below `size`. The page before the hole may end in zeros that
    /// were never written, so the answer is the last whole MiB below the hole (a file system that
    /// cannot report holes reports none). Unwritten zeros in a page that is no hole can remain
    /// below it: only the model's SHA-256 can tell, and a resumed file that fails it is fetched again.
    static func writtenPrefix(_ descriptor: Int32, size: UInt64) -> UInt64 {
        #if canImport(Darwin)
        let seekHole = SEEK_HOLE
        #else
        let seekHole: Int32 = 4 // SEEK_HOLE on Linux and Android; Glibc's module hides it behind _GNU_SOURCE
        #endif
        let hole = lseek(descriptor, 0, seekHole)
        guard hole >= 0, UInt64(hole) < size else { return size }
        return hole == 0 ? 0 : (UInt64(hole) - 1) / (1 << 20) * (1 << 20)
    }

    /// The first `count` bytes written (all of them are, when this is asked).
    func prefix(_ count: Int) throws -> [UInt8] {
        try lock.withLock {
            try flushPending()
            return try file.read(count: count, at: 0)
        }
    }

    /// Appends `bytes`, gathered into 1 MiB writes, each hashed on ``QueuedSHA256``'s queue while
    /// the next one gathers (the lock is held).
    private func store(_ bytes: UnsafeRawBufferPointer) throws {
        if pendingCount + bytes.count > pending.count { try flushPending() }
        if bytes.count > pending.count {
            // Written first: a piece whose write fails is asked again, and must not be hashed twice.
            try file.write(bytes, at: written)
            hasher.update(bytes)
            written += UInt64(bytes.count)
            publish()
        } else {
            UnsafeMutableRawBufferPointer(rebasing: pending[pendingCount...]).copyMemory(from: bytes)
            pendingCount += bytes.count
            written += UInt64(bytes.count)
        }
    }

    /// Writes the gathered bytes to the file.
    func flush() throws {
        try lock.withLock { try flushPending() }
    }

    /// Hands the pending bytes not yet hashed to the hasher (the lock is held).
    private func hashPending() {
        guard pendingHashed < pendingCount else { return }
        hashing[current] = hasher.update(later: UnsafeRawBufferPointer(rebasing: pending[pendingHashed..<pendingCount]))
        pendingHashed = pendingCount
    }

    /// Writes the pending bytes while they are hashed, then gathers into the other buffer once
    /// its own hashing finished (the lock is held).
    private func flushPending() throws {
        guard pendingCount > 0 else { return }
        hashPending()
        try file.write(UnsafeRawBufferPointer(rebasing: pending[..<pendingCount]), at: written - UInt64(pendingCount))
        pendingCount = 0
        pendingHashed = 0
        publish()
        current = 1 - current
        hashing[current]?.wait()
        hashing[current] = nil
    }

    /// The SHA-256 of everything written, as lowercase hex.
    func finish() -> String {
        lock.withLock {
            hashPending()
            return hasher.state.finalize().hexString
        }
    }

    func synchronize() throws {
        try flush()
        try file.synchronize()
    }

    /// Removes the file (its bytes were refused).
    func discard() {
        lock.withLock { progress?.rewind() }
        unlink(path)
    }

}

/// A part writer's two gathering buffers, freed with it — also when its initializer fails before
/// every property is set, when the writer's own `deinit` does not run.
private final class GatherBuffers {
    let halves = [UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16),
                  UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)]

    deinit {
        for half in halves { half.deallocate() }
    }
}
