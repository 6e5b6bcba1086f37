@testable import Coffer
import CofferFormat
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The in-process table behind ``FileLock``: which task may lock a file, and when a descriptor that
/// may be of a claimed file is closed. On NFS, closing any descriptor of a file drops the process's
/// lock on it, so a descriptor closed too early is a lock silently lost; `FileLockTests` cannot see
/// that on a local file system, so the table is held to it here, on a table of the test's own.
///
/// Each descriptor is the write end of a pipe, and "closed" is what the pipe's read end sees (end
/// of file): a descriptor number that another test running at the same time reuses cannot make a
/// closed descriptor look open, or the reverse.
@Suite("The table of lock files held in the process")
struct HeldLockFilesTests {
    @Test("a claimed file is refused to a second claim, whose descriptor stays open until the claim is given up")
    func secondClaimIsParked() throws {
        var table = HeldLockFiles()
        let holder = try PipeEnds(), latecomer = try PipeEnds(), next = try PipeEnds()
        defer { holder.closeReader(); latecomer.closeReader(); next.closeReader() }
        let file = try holder.identity()

        // The mutating calls are made outside `#expect`, which takes a method call apart.
        let first = table.claim(file, descriptor: holder.writer)
        let second = table.claim(file, descriptor: latecomer.writer)
        #expect(first && !second)
        #expect(table.holds(file))
        #expect(holder.writerIsOpen && latecomer.writerIsOpen)

        // The claimant closes its own descriptor and then gives the claim up: the parked one is
        // closed with it, and the file can be claimed again.
        close(holder.writer)
        table.forget(file)
        #expect(!table.holds(file))
        #expect(!latecomer.writerIsOpen)
        let again = table.claim(file, descriptor: next.writer)
        #expect(again)
        close(next.writer)
        table.forget(file)
    }

    @Test("a descriptor that lost the claim on a file is closed when that file's claim ends, though another file stays claimed")
    func loserClosedWithItsFile() throws {
        var table = HeldLockFiles()
        let holder = try PipeEnds(), latecomer = try PipeEnds(), lasting = try PipeEnds()
        defer { holder.closeReader(); latecomer.closeReader(); lasting.closeReader() }
        let file = try holder.identity(), other = try lasting.identity()

        let claimedOther = table.claim(other, descriptor: lasting.writer)
        let first = table.claim(file, descriptor: holder.writer)
        let second = table.claim(file, descriptor: latecomer.writer)
        #expect(claimedOther && first && !second)
        close(holder.writer)
        table.forget(file)
        #expect(!latecomer.writerIsOpen, "not kept until the other file's lock ends")
        #expect(table.holds(other) && lasting.writerIsOpen)
        close(lasting.writer)
        table.forget(other)
    }

    @Test("a parked descriptor stays open while any file is claimed, since it may be of that file")
    func parkedUntilNoFileIsClaimed() throws {
        var table = HeldLockFiles()
        let first = try PipeEnds(), second = try PipeEnds(), spare = try PipeEnds()
        defer { first.closeReader(); second.closeReader(); spare.closeReader() }
        let one = try first.identity(), other = try second.identity()

        let claimedOne = table.claim(one, descriptor: first.writer)
        let claimedOther = table.claim(other, descriptor: second.writer)
        #expect(claimedOne && claimedOther)
        table.park(spare.writer)
        close(first.writer)
        table.forget(one)
        #expect(spare.writerIsOpen)
        #expect(table.holds(other) && !table.holds(one))
        close(second.writer)
        table.forget(other)
        #expect(!spare.writerIsOpen)
    }

    @Test("a descriptor parked while no file is claimed is closed at once")
    func parkedWithNothingClaimed() throws {
        var table = HeldLockFiles()
        let spare = try PipeEnds()
        defer { spare.closeReader() }
        table.park(spare.writer)
        #expect(!spare.writerIsOpen)
    }
}

/// A pipe whose write end stands for a lock file's descriptor. Its read end does not wait, and
/// reads end of file once every write end is closed.
private struct PipeEnds {
    let reader: Int32
    let writer: Int32

    init() throws {
        var ends: [Int32] = [-1, -1]
        let made = pipe(&ends)
        try #require(made == 0)
        let flags = fcntl(ends[0], F_GETFL)
        let nonBlocking = fcntl(ends[0], F_SETFL, flags | O_NONBLOCK)
        try #require(flags >= 0 && nonBlocking == 0)
        reader = ends[0]
        writer = ends[1]
    }

    /// The pipe's device and inode, standing for a lock file's.
    func identity() throws -> FileIdentity {
        var info = stat()
        let looked = fstat(reader, &info)
        try #require(looked == 0)
        return FileIdentity(info)
    }

    /// Whether the write end is still open: a read finds nothing yet (`EAGAIN`), not the end.
    var writerIsOpen: Bool {
        var byte: UInt8 = 0
        return read(reader, &byte, 1) != 0
    }

    /// Closes the read end, the one descriptor the test always closes itself.
    func closeReader() { close(reader) }
}
