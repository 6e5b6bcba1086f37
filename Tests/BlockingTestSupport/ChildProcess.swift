import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process that inherits nothing from the test process but its three standard streams.
///
/// Foundation's `Process` on Linux emulates `POSIX_SPAWN_CLOEXEC_DEFAULT` by listing the
/// descriptors open while it prepares a spawn, and its `Pipe`s are not close-on-exec: a pipe
/// another test's thread opens in between is inherited by the child. A long-lived child (a
/// server) holding the write end of another child's output keeps that pipe open, so the test
/// reading it to its end waits until the server stops — and with ``ProcessSlots`` full of such
/// readers, every test that runs a child waits: a CI run froze until its 60-minute limit, which
/// this explains. A
/// `ChildProcess` closes every descriptor above 2 in the child after its streams are in place,
/// makes its pipes close-on-exec in the parent (no other child, however started, inherits them),
/// and starts the child with no blocked signals and default signal dispositions (a test thread's
/// mask and the test process's ignored SIGPIPE are not passed on). The child gets a process group
/// of its own, as with `Process`.
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's output streams goes.
    public enum Output {
        /// Discarded (`/dev/null`).
        case null
        /// A pipe, read through ``standardOutput`` or ``standardError``.
        case pipe
        /// An open file of the caller's (it stays the caller's to close).
        case file(FileHandle)
    }

    /// The child's process ID.
    public let pid: pid_t
    /// The write end of the child's standard input when it reads a pipe (else it reads `/dev/null`):
    /// close it once everything is written.
    public let standardInput: FileHandle?
    /// The read end of the child's standard output, for ``Output/pipe`` (read from the start:
    /// take it with ``readOutputs()``).
    public let standardOutput: FileHandle?
    /// The read end of the child's standard error, for ``Output/pipe`` (as ``standardOutput``).
    public let standardError: FileHandle?
    /// Each pipe read to its end on a thread of its own from the moment the child starts (a child
    /// that fills a pipe nobody reads would never end).
    private let readers: [HandleReader?]

    private let lock = NSLock()
    private var exitStatus: Int32?
    private var signaled = false

    /// The program's name, for messages: the executable's file name, or for `env` the program it
    /// runs (never the other arguments: they may hold a database URL with its password).
    public let name: String

    /// Whether a signal ended the child (then ``wait()`` gave the signal's number); false while it runs.
    public var endedBySignal: Bool { lock.withLock { signaled } }

    /// Starts `executable` with `arguments` (without the program name) and exactly `environment`,
    /// in `directory` if given; standard input is a pipe if `input` is true, else `/dev/null`.
    public init(executable: URL, arguments: [String], environment: [String: String], directory: URL? = nil,
                input: Bool = false, output: Output = .null, errorOutput: Output = .null) throws {
        // For env, the program it runs: the first argument that is neither an option nor NAME=value.
        name = executable.lastPathComponent == "env"
            ? arguments.first { !$0.hasPrefix("-") && !$0.contains("=") } ?? "env" : executable.lastPathComponent
        var actions = Self.emptyActions()
        var attributes = Self.emptyAttributes()
        try Self.check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init")
        defer { posix_spawn_file_actions_destroy(&actions) }
        try Self.check(posix_spawnattr_init(&attributes), "posix_spawnattr_init")
        defer { posix_spawnattr_destroy(&attributes) }

        var childEnds: [Int32] = []  // the child's ends of the pipes, closed here once it has them
        defer { childEnds.forEach { close($0) } }
        var readEnds: [FileHandle?] = [nil, nil]
        if input {
            let (readEnd, writeEnd) = try Self.closeOnExecPipe()
            childEnds.append(readEnd)
            standardInput = FileHandle(fileDescriptor: writeEnd, closeOnDealloc: true)
            try Self.check(posix_spawn_file_actions_adddup2(&actions, readEnd, 0), "adddup2")
        } else {
            standardInput = nil
            try Self.check(posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0), "addopen")
        }
        for (index, (target, choice)) in [(Int32(1), output), (Int32(2), errorOutput)].enumerated() {
            switch choice {
            case .null:
                try Self.check(posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0), "addopen")
            case .file(let handle):
                try Self.check(posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target), "adddup2")
            case .pipe:
                let (readEnd, writeEnd) = try Self.closeOnExecPipe()
                childEnds.append(writeEnd)
                readEnds[index] = FileHandle(fileDescriptor: readEnd, closeOnDealloc: true)
                try Self.check(posix_spawn_file_actions_adddup2(&actions, writeEnd, target), "adddup2")
            }
        }
        if let directory { try Self.check(Self.addChdir(&actions, directory.path), "addchdir") }
        try Self.closeTheRest(&actions, &attributes)

        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in Int32(1)...64 where signal != SIGKILL && signal != SIGSTOP { sigaddset(&defaults, signal) }  // real-time ones too
        var mask = sigset_t()
        sigemptyset(&mask)
        try Self.check(posix_spawnattr_setsigdefault(&attributes, &defaults), "setsigdefault")
        try Self.check(posix_spawnattr_setsigmask(&attributes, &mask), "setsigmask")
        try Self.check(posix_spawnattr_setpgroup(&attributes, 0), "setpgroup")
        try Self.check(posix_spawnattr_setflags(&attributes, Self.flags), "setflags")

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child = pid_t()
        try Self.check(posix_spawn(&child, executable.path, &actions, &attributes, argv, envp), executable.lastPathComponent)
        pid = child
        standardOutput = readEnds[0]
        standardError = readEnds[1]
        readers = readEnds.map { $0.map(HandleReader.init) }
    }

    deinit {
        // Nobody waits for it any more: reap it when it ends, so it does not stay a zombie.
        if exitStatus == nil {
            let pid = pid
            Thread { while waitpid(pid, nil, 0) == -1, errno == EINTR {} }.start()
        }
    }

    /// Runs `executable` to its end with the test process's environment, less the variables named
    /// with the prefix `clearing`, plus `extra`: its status (as
    /// ``wait()``) and standard output. Standard error is discarded unless `errorOutput` says where
    /// it goes. Blocks: call it off the pool. Past `deadline` seconds it is killed and
    /// ``Overran`` thrown (``finish(within:)``).
    public static func run(_ executable: URL, _ arguments: [String], clearing prefix: String? = nil,
                           environment extra: [String: String] = [:], errorOutput: Output = .null,
                           deadline: TimeInterval = 600) throws -> (status: Int32, output: Data) {
        var environment = ProcessInfo.processInfo.environment
        if let prefix { environment = environment.filter { !$0.key.hasPrefix(prefix) } }
        let child = try ChildProcess(executable: executable, arguments: arguments,
                                     environment: environment.merging(extra) { $1 }, output: .pipe, errorOutput: errorOutput)
        let result = try child.finish(within: deadline)
        return (result.status, result.output)
    }

    /// A child that outran its deadline (killed with its process group), or whose output stayed
    /// open after it ended (something it started still holds it).
    public struct Overran: Error, CustomStringConvertible {
        /// The program (``ChildProcess/name``).
        public let name: String
        /// What was not over in time.
        public let what: String
        public var description: String { "\(name) \(what)" }
    }

    /// Waits at most `seconds` for the child to end, and then at most a minute for its outputs to
    /// close: its status (as ``wait()``) and outputs. Past the deadline the child's whole process
    /// group is killed and ``Overran`` thrown, so that a hung child fails its test instead of
    /// holding a ``ProcessSlots`` slot (and every test waiting for one) until CI's time limit.
    public func finish(within seconds: TimeInterval) throws -> (status: Int32, output: Data, errorOutput: Data) {
        guard let status = wait(timeout: seconds) else {
            signal(SIGKILL, group: true)
            wait()
            throw Overran(name: name, what: "ran over its \(Int(seconds)) s and was killed")
        }
        guard let outputs = readOutputs(timeout: 60) else {
            // What it started and left holding the output: its process group outlives it (the
            // group's ID is not reused while a member lives).
            _ = kill(-pid, SIGKILL)
            throw Overran(name: name, what: "ended, but its output stayed open for a minute after")
        }
        return (status, outputs.output, outputs.errorOutput)
    }

    /// Whether the child has not ended yet (an ended child is reaped here).
    public var isRunning: Bool { lock.withLock { reap(blocking: false) == nil } }

    /// Waits for the child to end: its exit status, or the number of the signal that ended it
    /// (as Foundation's `terminationStatus`).
    @discardableResult
    public func wait() -> Int32 {
        // Once reaped, the ID may be another process's: never wait on it again.
        if let status = lock.withLock({ exitStatus }) { return status }
        // Wait without reaping, then reap under the lock: ``signal(_:)`` never meets a reused ID.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
        return lock.withLock { reap(blocking: true) ?? -1 }
    }

    /// Waits at most `seconds` for the child to end: as ``wait()``, or nil if it still runs.
    public func wait(timeout seconds: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let status = lock.withLock({ reap(blocking: false) }) { return status }
            if Date() >= deadline { return nil }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Sends `signal` to the child if it has not been reaped yet — with `group`, to every process
    /// of its process group (the child's own: what it started, such as a shell's commands).
    public func signal(_ signal: Int32, group: Bool = false) {
        lock.withLock {
            if exitStatus == nil { _ = kill(group ? -pid : pid, signal) }
        }
    }

    /// Standard output and standard error (each empty unless a pipe), once both have closed.
    public func readOutputs() -> (output: Data, errorOutput: Data) {
        (readers[0]?.wait() ?? Data(), readers[1]?.wait() ?? Data())
    }

    /// ``readOutputs()``, or nil if they are still open after `seconds` (another process holds one).
    public func readOutputs(timeout seconds: TimeInterval) -> (output: Data, errorOutput: Data)? {
        let deadline = DispatchTime.now() + seconds
        guard let output = readers[0].map({ $0.wait(until: deadline) }) ?? Data(),
              let errorOutput = readers[1].map({ $0.wait(until: deadline) }) ?? Data()
        else { return nil }
        return (output, errorOutput)
    }

    // Call with the lock held.
    private func reap(blocking: Bool) -> Int32? {
        if let exitStatus { return exitStatus }
        var raw: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &raw, blocking ? 0 : WNOHANG) } while result == -1 && errno == EINTR
        if result == -1, errno == ECHILD {  // reaped elsewhere: gone, its status unknown
            exitStatus = -1
            return exitStatus
        }
        guard result == pid else { return nil }
        let signal = raw & 0x7f
        signaled = signal != 0
        exitStatus = signal == 0 ? (raw >> 8) & 0xff : signal
        return exitStatus
    }

    private static func check(_ result: Int32, _ what: String) throws {
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO, userInfo: ["call": what]) }
    }

    private static func closeOnExecPipe() throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        #if canImport(Glibc)
        guard let pipe2 = Self.pipe2 else { throw POSIXError(.ENOSYS) }
        guard pipe2(&ends, O_CLOEXEC) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        #else
        guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        #endif
        return (ends[0], ends[1])
    }

    #if canImport(Glibc)
    private typealias Actions = posix_spawn_file_actions_t
    private typealias Attributes = posix_spawnattr_t
    private static func emptyActions() -> Actions { Actions() }
    private static func emptyAttributes() -> Attributes { Attributes() }
    private static let flags = Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP)

    private typealias FileActionsCall = @convention(c) (UnsafeMutablePointer<Actions>, Int32) -> Int32
    private typealias ChdirCall = @convention(c) (UnsafeMutablePointer<Actions>, UnsafePointer<CChar>) -> Int32

    /// glibc declares these (and `pipe2`) only with `_GNU_SOURCE`, which Swift's Glibc module does not set.
    private static func symbol<T>(_ name: String, as type: T.Type) -> T? {
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(address, to: type)
    }

    private static let closefrom = symbol("posix_spawn_file_actions_addclosefrom_np", as: FileActionsCall.self)
    private static let pipe2 = symbol("pipe2", as: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
    private static let chdir = symbol("posix_spawn_file_actions_addchdir_np", as: ChdirCall.self)

    private static func addChdir(_ actions: inout Actions, _ path: String) -> Int32 {
        guard let chdir else { return ENOSYS }
        return chdir(&actions, path)
    }

    /// glibc 2.34 and later close every descriptor from 3 on in the child; before that, those
    /// open now are listed (the race `Process` has, kept for old systems only).
    private static func closeTheRest(_ actions: inout Actions, _: inout Attributes) throws {
        if let closefrom { return try check(closefrom(&actions, 3), "addclosefrom") }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap(Int32.init) ?? []
        for descriptor in open where descriptor > 2 { _ = posix_spawn_file_actions_addclose(&actions, descriptor) }
    }
    #else
    private typealias Actions = posix_spawn_file_actions_t?
    private typealias Attributes = posix_spawnattr_t?
    private static func emptyActions() -> Actions { nil }
    private static func emptyAttributes() -> Attributes { nil }
    private static let flags = Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_CLOEXEC_DEFAULT)

    private static func addChdir(_ actions: inout Actions, _ path: String) -> Int32 {
        posix_spawn_file_actions_addchdir_np(&actions, path)
    }

    /// `POSIX_SPAWN_CLOEXEC_DEFAULT` (in ``flags``) closes everything the actions did not set.
    private static func closeTheRest(_: inout Actions, _: inout Attributes) throws {}
    #endif
}

/// Reads a file handle to its end on a thread of its own.
private final class HandleReader: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var bytes = Data()

    init(_ handle: FileHandle) {
        Thread { [self] in
            bytes = handle.readDataToEndOfFile()
            done.signal()
        }.start()
    }

    func wait() -> Data {
        done.wait()
        return bytes
    }

    /// The bytes, or nil if the handle is still open at `deadline`.
    func wait(until deadline: DispatchTime) -> Data? {
        guard done.wait(timeout: deadline) == .success else { return nil }
        return bytes
    }
}
