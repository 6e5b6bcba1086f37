import BlockingTestSupport
import Foundation
import Testing

/// Runs the built `coffer` binary as a user would, capturing its exit code and output.
struct CLI {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        let stdoutBytes: Data
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

    func read(_ name: String) -> Data? { FileManager.default.contents(atPath: path(name)) }

    /// Names in the working folder (to prove no temporary or partial file is left).
    func listing() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted() }

    @discardableResult
    func run(_ arguments: String..., environment: [String: String] = [:]) async throws -> Result {
        try await run(arguments, environment: environment)
    }

    /// Runs the binary to its end on a thread of its own once a slot is free (``ProcessSlots``), reading its standard
    /// output and error at the same time (one read after the other would stall a child that fills the
    /// second pipe first).
    @discardableResult
    func run(_ arguments: [String], environment: [String: String] = [:], interruptAfter: Double? = nil,
             binary: URL = Self.binary, terminateAfter timeout: Double? = nil) async throws -> Result {
        let folder = folder
        return try await ProcessSlots.shared.run {
            let process = Process()
            process.executableURL = binary
            process.arguments = arguments
            process.currentDirectoryURL = folder
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            try process.run()
            if let timeout {  // a process that should have stopped on its own, but did not
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { if process.isRunning { process.terminate() } }
            }
            if let interruptAfter {
                Thread.sleep(forTimeInterval: interruptAfter)
                process.interrupt()
            }
            let errData = PipeReader(err)
            let outData = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let errBytes = errData.wait()
            return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                          stderr: String(decoding: errBytes, as: UTF8.self), stdoutBytes: outData)
        }
    }

    static func randomData(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        var data = Data(count: (count + 7) / 8 * 8)
        data.withUnsafeMutableBytes { raw in
            for index in 0..<raw.count / 8 { raw.storeBytes(of: generator.next(), toByteOffset: index * 8, as: UInt64.self) }
        }
        return data.prefix(count)
    }
}
