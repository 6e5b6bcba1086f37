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
    private let process: Process

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
        process = Process()
        process.executableURL = Self.binary
        process.arguments = ["serve", "--data-dir", folder.appendingPathComponent("data").path,
                             "--hostname", "127.0.0.1", "--port", String(port)]
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("COFFER_") { environment[name] = nil }
        environment["COFFER_BOOTSTRAP_TOKEN"] = token
        environment.merge(extra) { $1 }
        process.environment = environment
        let log = folder.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// The server's output so far (for failure messages).
    func log() -> String {
        String(decoding: FileManager.default.contents(atPath: folder.appendingPathComponent("server.log").path) ?? Data(), as: UTF8.self)
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
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    private func waitUntilHealthy() async -> Bool {
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline, process.isRunning {
            if await Self.get(url + "/healthz") == 200 { return true }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return false
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

    /// A loopback port nothing listens on right now: bind port 0, read it back, close.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw POSIXError(.EIO) }
        return Int(UInt16(bigEndian: address.sin_port))
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
