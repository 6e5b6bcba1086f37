import BlockingTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the built `coffer` binary as a user would, capturing its exit code and output.
struct CLI {
    struct Result {
        /// The exit status, or the number of the signal that ended the process (see ``signal``).
        let status: Int32
        let stdout: String
        let stderr: String
        let stdoutBytes: Data
        /// The signal that ended the process; nil if it exited.
        var signal: Int32? = nil
    }

    /// The `coffer` binary next to the test bundle (SwiftPM builds it for this test target), or COFFER_BIN.
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["COFFER_BIN"] { return URL(fileURLWithPath: path) }
        #if os(Linux)
        let folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        #else
        let folder = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }!.bundleURL.deletingLastPathComponent()
        #endif
        return folder.appendingPathComponent("coffer")
    }()

    let folder: URL

    init() {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-cli-" + UUID().uuidString)
        try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: folder) }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func write(_ name: String, _ data: Data) { #expect(FileManager.default.createFile(atPath: path(name), contents: data)) }

    /// Writes a secret file (passphrase, key, token, credential, code) as a user keeps one: mode
    /// 0600. The CLI refuses a secret file that others may read or write.
    func writeSecret(_ name: String, _ data: Data) {
        #expect(FileManager.default.createFile(atPath: path(name), contents: data, attributes: [.posixPermissions: 0o600]))
        #expect(chmod(path(name), 0o600) == 0)
    }

    func read(_ name: String) -> Data? { FileManager.default.contents(atPath: path(name)) }

    /// Names in the working folder (to prove no temporary or partial file is left).
    func listing() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted() }

    @discardableResult
    func run(_ arguments: String..., environment: [String: String] = [:],
             sourceLocation: SourceLocation = #_sourceLocation) async throws -> Result {
        try await run(arguments, environment: environment, sourceLocation: sourceLocation)
    }

    /// How long a run may take when the caller gives no `terminateAfter`: past it the child is
    /// killed and the test fails naming the command, instead of holding one of the
    /// ``ProcessSlots`` (and every test waiting for one) until CI's limit.
    static let longestRun: Double = 900

    /// Runs the binary to its end on a thread of its own once a slot is free (``ProcessSlots``), reading its standard
    /// output and error at the same time (one read after the other would stall a child that fills the
    /// second pipe first). The child is a ``ChildProcess``: it inherits no other test's pipes, and none inherits its own.
    ///
    /// `interruptAfter` sends SIGINT that many seconds after the start (a user's Ctrl-C: before the
    /// CLI has set up its handling, it ends by the signal). `interruptWhen` sends it once the
    /// condition holds (checked every 5 ms), for an interruption in the middle of the work.
    @discardableResult
    func run(_ arguments: [String], environment: [String: String] = [:], interruptAfter: Double? = nil,
             interruptWhen: (@Sendable () -> Bool)? = nil,
             binary: URL = Self.binary, terminateAfter timeout: Double? = nil,
             sourceLocation: SourceLocation = #_sourceLocation) async throws -> Result {
        let folder = folder
        let (result, trouble) = try await ProcessSlots.shared.run { () throws -> (Result, String?) in
            let child = try ChildProcess(executable: binary, arguments: arguments,
                                         environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                         directory: folder, output: .pipe, errorOutput: .pipe)
            if let interruptAfter {
                Thread.sleep(forTimeInterval: interruptAfter)
                child.signal(SIGINT)
            }
            if let interruptWhen {
                while child.isRunning, !interruptWhen() { Thread.sleep(forTimeInterval: 0.005) }
                child.signal(SIGINT)
            }
            var trouble: String?
            var status = child.wait(timeout: timeout ?? Self.longestRun)
            if status == nil, timeout != nil {  // a process that should have stopped on its own, but did not
                child.signal(SIGTERM)
                status = child.wait(timeout: 30)
            }
            if status == nil {
                if timeout == nil { trouble = "did not end within \(Int(Self.longestRun)) s and was killed" }
                child.signal(SIGKILL, group: true)  // with whatever it started (a shell's commands)
                status = child.wait()
            }
            // Its outputs close when it and what it started have ended; something else holding
            // them must not hold this slot for good.
            guard let (outData, errBytes) = child.readOutputs(timeout: 60) else {
                let result = Result(status: status ?? -1, stdout: "", stderr: "", stdoutBytes: Data())
                return (result, "ended, but its output stayed open for 60 s (another process holds it)")
            }
            return (Result(status: status ?? -1, stdout: String(decoding: outData, as: UTF8.self),
                           stderr: String(decoding: errBytes, as: UTF8.self), stdoutBytes: outData,
                           signal: child.endedBySignal ? status : nil), trouble)
        }
        if let trouble {
            Issue.record("\(binary.lastPathComponent) \(arguments.first ?? "") \(trouble)", sourceLocation: sourceLocation)
        }
        return result
    }

    /// `count` bytes no two calls share: a SplitMix64 stream from a random seed. Drawing every
    /// eight bytes from the system generator was a `getrandom` call each, and the loop over a
    /// range a generic one in this debug build: seconds of the cooperative pool per file.
    static func randomData(_ count: Int) -> Data {
        var generator = SplitMix64(seed: .random(in: .min ... .max))
        var data = Data(count: (count + 7) / 8 * 8)
        data.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < raw.count {
                raw.storeBytes(of: generator.next(), toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
        }
        return data.prefix(count)
    }
}
