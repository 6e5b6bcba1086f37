@testable import Coffer
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Tasks of one process taking the same ``FileLock``. These guard the in-process table
/// (``HeldLockFiles``): on NFS `flock` is emulated with `fcntl` locks, which belong to the process,
/// so two descriptors of one process never exclude each other and closing either drops the lock.
/// On the local temporary folder these tests run in, `flock` alone already passes them; they hold
/// the table to the same answers, so that a change to it cannot make NFS caches share a lock.
@Suite("FileLock between tasks of one process")
struct FileLockTests {
    @Test("a second acquisition in the process is refused, and the refused attempt does not release the holder")
    func excludesWithinTheProcess() async throws {
        try await Self.withFolder { path in
            let holder = try #require(try FileLock.acquireIfFree(path))
            #expect(try FileLock.acquireIfFree(path) == nil)
            // The refusal closed nothing of the holder's: the lock still excludes, in the process
            // and (another open file, as another process's) in the kernel.
            #expect(try FileLock.acquireIfFree(path) == nil)
            #expect(Self.kernelRefuses(path))
            #expect(holder.isStillNamed())
            holder.release()
        }
    }

    @Test("after its release the lock can be taken again, by a caller or by a waiter")
    func takenAgainAfterRelease() async throws {
        try await Self.withFolder { path in
            let first = try #require(try FileLock.acquireIfFree(path))
            first.release()
            first.release()  // a second release closes nothing
            let second = try #require(try FileLock.acquireIfFree(path))
            let waiter = Task { try await FileLock.acquire(path) }
            try await Task.sleep(nanoseconds: 200_000_000)
            second.release()
            let third = try await waiter.value
            #expect(third.isStillNamed())
            #expect(try FileLock.acquireIfFree(path) == nil)
            third.release()
        }
    }

    @Test("a lock on a file removed and made again is another entry: each release frees only its own file")
    func replacedFileIsAnotherEntry() async throws {
        try await Self.withFolder { path in
            let old = try #require(try FileLock.acquireIfFree(path))
            try FileManager.default.removeItem(atPath: path)
            let new = try #require(try FileLock.acquireIfFree(path))
            #expect(!old.isStillNamed() && new.isStillNamed())
            // Releasing the lock on the removed file leaves the one on the file there now.
            old.release()
            #expect(try FileLock.acquireIfFree(path) == nil)
            #expect(Self.kernelRefuses(path))
            new.release()
            let again = try #require(try FileLock.acquireIfFree(path))
            again.release()
        }
    }

    @Test("tasks racing for one lock never hold it at the same time")
    func racingTasksExclude() async throws {
        try await Self.withFolder { path in
            let holders = Holders()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        for _ in 0..<200 {
                            if let lock = try FileLock.acquireIfFree(path) {
                                holders.enter()
                                await Task.yield()
                                holders.leave()
                                lock.release()
                            } else {
                                await Task.yield()
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(holders.most == 1 && holders.times > 0, "\(holders.most) at once, \(holders.times) in all")
        }
    }

    /// Runs `body` with the path of a lock file in a temporary folder of its own, removed after.
    private static func withFolder<T>(_ body: (String) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-filelock-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        return try await body(folder + "/lock")
    }

    /// Whether `flock` on a file description of the test's own (as another process would open)
    /// finds the file locked. Only on a local file system: on NFS, closing this descriptor would
    /// drop the process's lock, the very thing ``FileLock`` avoids.
    private static func kernelRefuses(_ path: String) -> Bool {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }
}

/// How many tasks hold a lock at once, and the most that ever did.
private final class Holders: @unchecked Sendable {
    private let lock = NSLock()
    private var now = 0
    private var peak = 0
    private var count = 0

    func enter() {
        lock.withLock {
            now += 1
            count += 1
            peak = max(peak, now)
        }
    }

    func leave() { lock.withLock { now -= 1 } }

    var most: Int { lock.withLock { peak } }
    var times: Int { lock.withLock { count } }
}
