import BlockingTestSupport
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `coffer-server` process on a free loopback port with a temporary data folder, for the
/// admin CLI tests (this test target cannot link the server, so it runs the built binary).
final class AdminServer: @unchecked Sendable {
    /// `coffer-server` next to the test bundle (beside `coffer`), or COFFER_SERVER_BIN.
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["COFFER_SERVER_BIN"] { return URL(fileURLWithPath: path) }
        return CLI.binary.deletingLastPathComponent().appendingPathComponent("coffer-server")
    }()

    let url: String
    let port: Int
    let token: String
    let folder: URL
    private let process: ChildProcess

    /// Starts a server and waits until `/healthz` answers; nil, with an issue recorded, if the
    /// binary is missing or the server does not come up.
    static func start(environment extra: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) async -> AdminServer? {
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            Issue.record("""
                \(binary.path) is missing: build it with `swift build --product coffer-server` (with the same \
                --scratch-path) before running these tests, or set COFFER_SERVER_BIN
                """, sourceLocation: sourceLocation)
            return nil
        }
        var lastLog = ""
        for _ in 0..<3 {
            guard let server = try? AdminServer(environment: extra) else { continue }
            if await server.waitUntilHealthy() { return server }
            lastLog = server.log()
            // Exited early: most likely another process took the port between probe and start.
            let exited = !server.process.isRunning
            await server.stop()
            if !exited { break }
        }
        Issue.record("coffer-server did not become healthy:\n\(lastLog)", sourceLocation: sourceLocation)
        return nil
    }

    private init(environment extra: [String: String]) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-admin-server-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        port = try Self.freePort()
        url = "http://127.0.0.1:\(port)"
        token = "cft_admintest_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("COFFER_") { environment[name] = nil }
        environment["COFFER_BOOTSTRAP_TOKEN"] = token
        environment.merge(extra) { $1 }
        let log = folder.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        process = try ChildProcess(executable: Self.binary,
                                   arguments: ["serve", "--data-dir", folder.appendingPathComponent("data").path,
                                               "--hostname", "127.0.0.1", "--port", String(port)],
                                   environment: environment, output: .file(handle), errorOutput: .file(handle))
    }

    /// The server's output so far (for failure messages).
    func log() -> String {
        String(decoding: FileManager.default.contents(atPath: folder.appendingPathComponent("server.log").path) ?? Data(), as: UTF8.self)
    }

    /// For the message of a command that could not reach the server: whether it still runs, or
    /// how it ended and the last lines of its log.
    func condition() -> String {
        guard !process.isRunning else { return "the server still runs" }
        let tail = log().split(separator: "\n", omittingEmptySubsequences: false).suffix(20).joined(separator: "\n")
        return "the server has exited with status \(process.wait()); its log ends:\n\(tail)"
    }

    /// Stops the server, waits until it has exited and removes its data.
    func stop() async {
        await offThePool { [self] in stopNow() }
    }

    /// ``stop()`` for a `defer`, which cannot wait: the server is sent SIGTERM now, and its exit is
    /// waited for and its data removed on a thread of its own.
    func stopInBackground() {
        Thread { [self] in stopNow() }.start()
    }

    private func stopNow() {
        process.signal(SIGTERM)
        process.wait()
        try? FileManager.default.removeItem(at: folder)
    }

    private func waitUntilHealthy() async -> Bool {
        await Self.waitUntilHealthy(url, while: process)
    }

    /// Waits until `/healthz` at `url` answers 200: false if `process` stopped or 90 s passed.
    ///
    /// The whole wait runs on a thread of its own (``offThePool(_:)``). A loop of awaits on the
    /// cooperative pool is not checking while CPU-bound tests hold both of its threads, which they
    /// did for the first 90 s of `swift test` in CI: fifteen servers that listened within a second
    /// were reported "not healthy" when their waits resumed past the deadline with one check made.
    static func waitUntilHealthy(_ url: String, while process: ChildProcess) async -> Bool {
        await offThePool {
            let deadline = Date().addingTimeInterval(90)
            while Date() < deadline, process.isRunning {
                if getNow(url + "/healthz") == 200 { return true }
                Thread.sleep(forTimeInterval: 0.2)
            }
            return false
        }
    }

    /// The status of a GET, or nil if nothing answered.
    static func get(_ address: String) async -> Int? {
        await offThePool { getNow(address) }
    }

    private static func getNow(_ address: String) -> Int? {
        let done = DispatchSemaphore(value: 0)
        let status = AdminBox<Int?>(nil)
        var request = URLRequest(url: URL(string: address)!)
        request.timeoutInterval = 5
        URLSession.shared.dataTask(with: request) { _, response, _ in
            status.set((response as? HTTPURLResponse)?.statusCode)
            done.signal()
        }.resume()
        done.wait()
        return status.get()
    }

    /// A loopback port nothing listens on right now, below the kernel's ephemeral range and never
    /// handed out twice in this process. A port found by binding to 0 lies in that range, where the
    /// in-process servers of other suites (which bind 0) and every outgoing connection draw theirs:
    /// CI once saw a stopped server's port taken by another suite's server, so a test that expected
    /// "connection refused" got that server's 401 instead. Below the range only this picker hands
    /// ports out (tools/free_port.py does the same for the scripts).
    static func freePort() throws -> Int {
        try PortPicker.shared.next()
    }
}

/// Loopback ports for servers the tests start as processes, each handed out once (see
/// ``AdminServer/freePort()``).
final class PortPicker: @unchecked Sendable {
    static let shared = PortPicker()

    private let lock = NSLock()
    private var handedOut: Set<Int> = []
    private let range: Range<Int>
    private var generator = SystemRandomNumberGenerator()

    private init() {
        // The kernel's ephemeral range starts at 32768 unless configured otherwise (Darwin: 49152).
        var low = 32768
        if let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
           let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first, let value = Int(first) {
            low = value
        }
        range = 10000..<max(low, 10001)
    }

    /// A port in the range that this process never handed out and that nothing is bound to now.
    func next() throws -> Int {
        try lock.withLock {
            for _ in 0..<1000 {
                let port = Int.random(in: range, using: &generator)
                guard !handedOut.contains(port), Self.canBind(port) else { continue }
                handedOut.insert(port)
                return port
            }
            throw POSIXError(.EADDRINUSE)
        }
    }

    /// Whether 127.0.0.1:`port` can be bound right now (the probe is closed again).
    private static func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = LoopbackSocket.address(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}

/// A value shared with a callback.
final class AdminBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func get() -> Value { lock.withLock { value } }
}
