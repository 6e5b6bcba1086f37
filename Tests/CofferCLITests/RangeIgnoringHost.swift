import BlockingTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A blob host that is not a Coffer server, as a real process on a loopback port: Python's
/// `http.server` answering every `HEAD` and `GET` for any path with one file, in a chosen way.
///
/// - `ignore-range`: 200 and the whole file to every request, Range or not (a misconfigured CDN);
/// - `ignore-range-late`: the same, a second after each request;
/// - `endless`: 200, no Content-Length, and zeros until the client hangs up;
/// - `overlong`: 200, no Content-Length, the file and then a mebibyte more;
/// - `wrong-range`: 206 with a Content-Range one byte off what was asked for;
/// - `wrong-length`: 200 with a Content-Length one more than the file's size, then the file;
/// - `short`: 200, no Content-Length, half the file, then the connection closes (a clean end);
/// - `cut`: 200 with the file's Content-Length, half the file, then the connection closes.
///
/// `HEAD` always answers with the file's true size.
final class RangeIgnoringHost: @unchecked Sendable {
    let url: String
    private let process: ChildProcess
    private let folder: URL

    // No line of the script starts with "import": tools/check_imports.py reads Swift imports line by line.
    static let script = #"""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from os.path import getsize
    from re import match
    from signal import SIG_UNBLOCK, pthread_sigmask, valid_signals
    from sys import argv
    from time import sleep
    # Started from a test thread that blocks most signals: unblock them, or SIGTERM would not stop it.
    pthread_sigmask(SIG_UNBLOCK, valid_signals())
    port, mode, path = int(argv[1]), argv[2], argv[3]
    size = getsize(path)
    class Host(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *args): pass
        def do_HEAD(self):
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
        def send_file(self, extra=0):
            with open(path, "rb") as f:
                while True:
                    piece = f.read(1 << 20)
                    if not piece: break
                    self.wfile.write(piece)
            self.wfile.write(b"\0" * extra)
        def do_GET(self):
            try:
                if mode in ("ignore-range", "ignore-range-late"):
                    if mode == "ignore-range-late": sleep(1)
                    self.do_HEAD()
                    self.send_file()
                elif mode in ("endless", "overlong"):
                    self.close_connection = True
                    self.send_response(200)
                    self.send_header("Connection", "close")
                    self.end_headers()
                    if mode == "overlong":
                        self.send_file(extra=1 << 20)
                    else:
                        while True: self.wfile.write(b"\0" * (1 << 16))
                elif mode == "wrong-length":
                    self.send_response(200)
                    self.send_header("Content-Length", str(size + 1))
                    self.end_headers()
                    self.send_file(extra=1)
                elif mode in ("short", "cut"):
                    self.close_connection = True
                    self.send_response(200)
                    if mode == "cut": self.send_header("Content-Length", str(size))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    with open(path, "rb") as f: self.wfile.write(f.read(size // 2))
                elif mode == "wrong-range":
                    first, last = map(int, match(r"bytes=(\d+)-(\d+)", self.headers["Range"]).groups())
                    self.send_response(206)
                    self.send_header("Content-Range", "bytes %d-%d/%d" % (first + 1, last + 1, size + 1))
                    self.send_header("Content-Length", str(last - first + 1))
                    self.end_headers()
                    with open(path, "rb") as f:
                        f.seek(first)
                        self.wfile.write(f.read(last - first + 1))
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
    ThreadingHTTPServer(("127.0.0.1", port), Host).serve_forever()
    """#

    /// Starts the host serving `file`; nil, with an issue recorded, if it does not come up.
    static func start(_ mode: String, serving file: String, sourceLocation: SourceLocation = #_sourceLocation) async -> RangeIgnoringHost? {
        for _ in 0..<3 {
            guard let host = try? RangeIgnoringHost(mode, serving: file) else { continue }
            if await offThePool({ host.waitUntilListening() }) { return host }
            host.stop()
        }
        Issue.record("the Python blob host did not come up (is python3 installed?)", sourceLocation: sourceLocation)
        return nil
    }

    private init(_ mode: String, serving file: String) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-range-host-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let script = folder.appendingPathComponent("host.py")
        try Data(Self.script.utf8).write(to: script)
        let port = try AdminServer.freePort()
        url = "http://127.0.0.1:\(port)"
        process = try ChildProcess(executable: URL(fileURLWithPath: "/usr/bin/env"),
                                   arguments: ["python3", script.path, String(port), mode, file],
                                   environment: ProcessInfo.processInfo.environment)
    }

    private func waitUntilListening() -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, process.isRunning {
            if accepts() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    /// Whether something accepts a TCP connection on the port (a GET would fetch the whole file).
    private func accepts() -> Bool {
        URL(string: url)?.port.map(LoopbackSocket.accepts(port:)) ?? false
    }

    func stop() {
        // SIGKILL: the host keeps nothing worth a clean exit, and must not outlive a test.
        process.signal(SIGKILL)
        process.wait()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Runs a program under GNU time (`/usr/bin/time -f %M`), which reports that program's own peak
/// resident set.
///
/// Not `wait4` on a child spawned from the test process: `posix_spawn` starts the child in the
/// parent's memory (vfork), and the kernel keeps the parent's peak as the child's when it execs,
/// so a child of a large test process would report the test process's peak. `time` is small, and
/// forks the program from there.
enum MeasuredRun {
    struct Result {
        let status: Int32
        /// Peak resident set size of the child, in bytes.
        let peakBytes: Int
        let stdout: String
        let stderr: String
    }

    static let time = "/usr/bin/time"

    static func run(_ binary: URL, _ arguments: [String], environment: [String: String], outputIn folder: URL) async throws -> Result {
        try await ProcessSlots.shared.run { try runBlocking(binary, arguments, environment: environment, outputIn: folder) }
    }

    private static func runBlocking(_ binary: URL, _ arguments: [String], environment: [String: String], outputIn folder: URL) throws -> Result {
        let outPath = folder.appendingPathComponent("measured.stdout").path
        let errPath = folder.appendingPathComponent("measured.stderr").path
        let peakPath = folder.appendingPathComponent("measured.peak").path
        let handles = try [outPath, errPath].map { path -> FileHandle in
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw POSIXError(.EIO)
            }
            return try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        }
        defer { handles.forEach { try? $0.close() } }
        let child = try ChildProcess(executable: URL(fileURLWithPath: time), arguments: ["-f", "%M", "-o", peakPath, binary.path] + arguments,
                                     environment: environment, output: .file(handles[0]), errorOutput: .file(handles[1]))
        let status = try child.finish(within: 900).status
        let text = { (path: String) in String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) }
        // The last line is %M, in KiB ("Command exited with non-zero status N" may come before it).
        guard let peak = text(peakPath).split(separator: "\n").last.flatMap({ Int($0) }) else {
            throw POSIXError(.EIO)
        }
        return Result(status: child.endedBySignal ? 128 + status : status, peakBytes: peak * 1024,
                      stdout: text(outPath), stderr: text(errPath))
    }
}
