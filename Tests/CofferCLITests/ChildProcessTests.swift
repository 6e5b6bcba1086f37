import BlockingTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The test children's launcher (``ChildProcess``): what a child inherits decides whether reading
/// another child's output to its end can wait on a server that happens to hold that pipe.
@Suite("Child processes of the tests")
struct ChildProcessTests {
    #if os(Linux)
    @Test("a child holds its three standard streams and nothing else the test process has open")
    func nothingInherited() async throws {
        var plain: [Int32] = [-1, -1]
        #expect(pipe(&plain) == 0)  // neither end close-on-exec, as Foundation's Pipe makes them
        defer { plain.forEach { close($0) } }
        // `ls` lists its own descriptors: the three streams and the one it reads the folder with.
        let (status, output) = try await offThePool { try ChildProcess.run(URL(fileURLWithPath: "/bin/ls"), ["/proc/self/fd"]) }
        #expect(status == 0)
        let listed = String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }.sorted()
        #expect(listed == [0, 1, 2, 3], "\(listed); the test process's pipe was \(plain)")
    }

    @Test("the parent's ends of a child's pipes are close-on-exec, so no other child inherits them")
    func pipesCloseOnExec() async throws {
        let child = try ChildProcess(executable: URL(fileURLWithPath: "/bin/cat"), arguments: [],
                                     environment: [:], input: true, output: .pipe, errorOutput: .pipe)
        for handle in [child.standardInput, child.standardOutput, child.standardError] {
            let flags = fcntl(try #require(handle).fileDescriptor, F_GETFD)
            #expect(flags >= 0 && flags & FD_CLOEXEC != 0)
        }
        try child.standardInput?.close()
        #expect(await offThePool { child.wait() } == 0)
    }

    @Test("a child starts with no signal blocked or ignored, whatever the thread that starts it has")
    func defaultSignals() async throws {
        let status = try await offThePool { () throws -> String in
            // A thread that blocks SIGTERM, in a process that ignores SIGPIPE.
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            let previous = signal(SIGPIPE, SIG_IGN)
            defer { signal(SIGPIPE, previous) }
            return String(decoding: try ChildProcess.run(URL(fileURLWithPath: "/bin/cat"), ["/proc/self/status"]).output, as: UTF8.self)
        }
        let masks = status.split(separator: "\n").filter { $0.hasPrefix("SigBlk:") || $0.hasPrefix("SigIgn:") }
        #expect(masks.count == 2)
        // glibc's posix_spawn leaves its two internal signals (32 and 33, bits 31 and 32) ignored;
        // no program can set or see them.
        let glibcInternal: UInt64 = 0x1_8000_0000
        for line in masks {
            let bits = line.split(separator: "\t").last.flatMap { UInt64($0, radix: 16) }
            #expect(bits.map { $0 & ~glibcInternal } == 0, "\(line)")
        }
    }
    #endif

    @Test("a child that outlives its deadline is stopped and reported by its wait")
    func deadline() async throws {
        let child = try ChildProcess(executable: URL(fileURLWithPath: "/bin/sleep"), arguments: ["100000"], environment: [:])  // never ends by itself within the test
        #expect(await offThePool { child.wait(timeout: 0.2) } == nil)
        #expect(child.isRunning)
        child.signal(SIGKILL)
        #expect(await offThePool { child.wait() } == SIGKILL)
        #expect(child.endedBySignal)
        #expect(!child.isRunning)
        #expect(child.wait() == SIGKILL, "a reaped child's status, without waiting on its ID again")
    }
}
