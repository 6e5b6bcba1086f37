import BlockingTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Inputs that are not regular files (FIFOs, folders) and secret files that never end: each is
/// refused promptly with the documented exit code, never waited on or read whole.
///
/// Every run here has a 10-second guard: a command still running then is killed and the test fails,
/// so a regression shows as a failure instead of a hung test run.
@Suite("Non-regular inputs and bounded secret files")
struct InputHardeningTests {
    static let passphrase = "an input-hardening passphrase of over 32 bytes"

    /// What a guarded run gave: nil `status` when it had to be killed.
    struct Outcome {
        let status: Int32?
        let stdout: Data
        let stderr: String
    }

    /// Runs `executable` (the `coffer` binary unless told) in the CLI's folder with output to files,
    /// killing it after `limit` seconds.
    static func run(
        _ cli: CLI, _ arguments: [String], environment: [String: String] = [:],
        executable: URL = CLI.binary, limit: Double = 10
    ) async throws -> Outcome {
        try await ProcessSlots.shared.run { try runBlocking(cli, arguments, environment: environment, executable: executable, limit: limit) }
    }

    private static func runBlocking(_ cli: CLI, _ arguments: [String], environment: [String: String], executable: URL, limit: Double) throws -> Outcome {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-hardening-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outPath = scratch.appendingPathComponent("out").path, errPath = scratch.appendingPathComponent("err").path
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        defer {
            try? out.close()
            try? err.close()
        }

        let child = try ChildProcess(executable: executable, arguments: arguments,
                                     environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                     directory: cli.folder, output: .file(out), errorOutput: .file(err))
        let status = child.wait(timeout: limit)
        if status == nil {
            child.signal(SIGKILL)
            child.wait()
        }
        return Outcome(
            status: status, stdout: FileManager.default.contents(atPath: outPath) ?? Data(),
            stderr: String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self))
    }

    /// Makes a FIFO named `name` in the CLI's folder.
    static func makeFIFO(_ cli: CLI, _ name: String) {
        #expect(mkfifo(cli.path(name), 0o600) == 0)
    }

    /// A small password-based RNCryptor file `name` of `plaintext`, written by `coffer encrypt`.
    static func makeRNCryptor(_ cli: CLI, _ name: String, plaintext: Data, passphrase: String) async throws {
        cli.write(name + ".plain", plaintext)
        let made = try await run(
            cli, ["encrypt", name + ".plain", "--format", "rncryptor", "--passphrase-env", "P", "-o", name],
            environment: ["P": passphrase])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stderr.contains("warning: RNCryptor v3 derives its key with PBKDF2-SHA1 at 10 000 rounds"), "\(made.stderr)")
        try FileManager.default.removeItem(atPath: cli.path(name + ".plain"))
    }

    // MARK: FIFOs and folders as inputs

    /// Every command that opens its input as a file, given a FIFO nobody writes to.
    static let fifoCommands: [[String]] = [
        ["inspect", "pipe"],
        ["inspect", "--json", "pipe"],
        ["decrypt", "pipe", "--passphrase-env", "P", "-o", "out"],
        ["decrypt", "pipe", "--format", "rncryptor", "--passphrase-env", "P", "-o", "out"],
        ["decrypt", "pipe", "--format", "cryptokit-combined", "--passphrase-env", "P", "-o", "out"],
        ["decrypt", "pipe", "--format", "coffer", "--passphrase-env", "P", "-o", "out"],
        ["encrypt", "pipe", "--format", "rncryptor", "--passphrase-env", "P", "-o", "out"],
        ["encrypt", "pipe", "--passphrase-env", "P", "-o", "out"],
        ["migrate", "pipe", "--passphrase-env", "P", "--new-passphrase-env", "P", "-o", "out"],
        ["encrypt", "m.bin", "--key", "pipe", "-o", "out"],
    ]

    @Test("a FIFO as input is refused promptly with exit 66", arguments: fifoCommands)
    func fifoInputIsRefused(arguments: [String]) async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        Self.makeFIFO(cli, "pipe")
        cli.write("m.bin", Data("model".utf8))
        let outcome = try await Self.run(cli, arguments, environment: ["P": Self.passphrase])
        #expect(outcome.status == 66, "\(arguments): \(outcome.stderr)")
        #expect(outcome.stderr.contains("pipe"), "\(outcome.stderr)")
        #expect(outcome.stderr.split(separator: "\n").count == 1, "\(outcome.stderr)")
        #expect(cli.listing() == ["m.bin", "pipe"])
    }

    /// Commands that want a file, given a folder.
    static let folderCommands: [[String]] = [
        ["decrypt", "folder", "--passphrase-env", "P", "-o", "out"],
        ["decrypt", "folder", "--format", "rncryptor", "--passphrase-env", "P", "-o", "out"],
        ["decrypt", "folder", "--format", "cryptokit-combined", "--passphrase-env", "P", "-o", "out"],
        ["decrypt", "folder", "--format", "coffer", "--passphrase-env", "P", "-o", "out"],
        ["encrypt", "folder", "--format", "rncryptor", "--passphrase-env", "P", "-o", "out"],
        ["migrate", "folder", "--passphrase-env", "P", "--new-passphrase-env", "P", "-o", "out"],
    ]

    @Test("a folder where a file is needed is refused with exit 66, not 74", arguments: folderCommands)
    func folderInputIsNoInput(arguments: [String]) async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try FileManager.default.createDirectory(atPath: cli.path("folder"), withIntermediateDirectories: false)
        cli.write("folder/inside", Data("x".utf8))
        let outcome = try await Self.run(cli, arguments, environment: ["P": Self.passphrase])
        #expect(outcome.status == 66, "\(arguments): \(outcome.stderr)")
        #expect(outcome.stderr.contains("folder"), "\(outcome.stderr)")
        #expect(cli.listing() == ["folder"])
    }

    // MARK: Passphrase files

    /// A passphrase sealed with, the contents of a passphrase file, and whether they must match.
    struct LineEnding: Sendable, CustomTestStringConvertible {
        let sealedWith: String
        let fileContents: String
        let matches: Bool

        init(_ sealedWith: String, _ fileContents: String, _ matches: Bool) {
            self.sealedWith = sealedWith
            self.fileContents = fileContents
            self.matches = matches
        }

        var testDescription: String { "\(sealedWith.debugDescription) vs file \(fileContents.debugDescription)" }
    }

    static let lineEndings: [LineEnding] = [
        LineEnding("secret", "secret", true),
        LineEnding("secret", "secret\n", true),
        LineEnding("secret", "secret\r\n", true),
        LineEnding("secret", "secret\r", false),  // a lone CR is part of the passphrase
        LineEnding("secret", "secret\n\n", false),  // only one line ending goes
        LineEnding("secret", "secret\r\n\r\n", false),
        LineEnding("secret\r", "secret\r", true),
        LineEnding("secret\r", "secret\r\r\n", true),
        LineEnding("secret\r", "secret\r\n", false),
        LineEnding("secret\n", "secret\n\n", true),
        LineEnding("secret\r\n", "secret\r\n\r\n", true),
    ]

    @Test("a passphrase file loses exactly one final \\n or \\r\\n, never a lone \\r", arguments: lineEndings)
    func passphraseFileLineEndings(_ ending: LineEnding) async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let plaintext = Data("the plaintext".utf8)
        try await Self.makeRNCryptor(cli, "m.enc", plaintext: plaintext, passphrase: ending.sealedWith)
        cli.writeSecret("pass", Data(ending.fileContents.utf8))
        let opened = try await Self.run(cli, ["decrypt", "m.enc", "--passphrase-file", "pass", "--stdout"])
        if ending.matches {
            #expect(opened.status == 0, "\(opened.stderr)")
            #expect(opened.stdout == plaintext)
        } else {
            #expect(opened.status == 65, "\(opened.stderr)")
            #expect(opened.stdout.isEmpty)
        }
    }

    @Test("a passphrase file that never ends is refused after 4097 bytes, not read whole")
    func endlessPassphraseFileIsBounded() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try await Self.makeRNCryptor(cli, "m.enc", plaintext: Data("x".utf8), passphrase: Self.passphrase)
        Self.makeFIFO(cli, "pass")
        // Held open for writing (read-write, so the open does not wait for a reader) with more than
        // 4096 bytes queued: a reader that wants the end of the file waits forever.
        let writer = open(cli.path("pass"), O_RDWR | O_CLOEXEC)
        try #require(writer >= 0)
        defer { close(writer) }
        let queued = [UInt8](repeating: UInt8(ascii: "a"), count: 8192)
        #expect(queued.withUnsafeBytes { write(writer, $0.baseAddress!, $0.count) } == queued.count)

        let outcome = try await Self.run(cli, ["decrypt", "m.enc", "--passphrase-file", "pass", "-o", "out"])
        #expect(outcome.status == 64, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("over 4096 bytes"), "\(outcome.stderr)")
        #expect(!cli.listing().contains("out"))

        // The same limit holds for a regular file.
        cli.writeSecret("big", Data(repeating: UInt8(ascii: "b"), count: 4097))
        let big = try await Self.run(cli, ["decrypt", "m.enc", "--passphrase-file", "big", "-o", "out"])
        #expect(big.status == 64, "\(big.stderr)")
        cli.writeSecret("limit", Data(repeating: UInt8(ascii: "b"), count: 4096))
        #expect(try await Self.run(cli, ["decrypt", "m.enc", "--passphrase-file", "limit", "-o", "out"]).status == 65)
    }

    @Test("a passphrase from a pipe (process substitution) still works", .enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/bash")))
    func passphraseFromProcessSubstitution() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let plaintext = Data("piped".utf8)
        try await Self.makeRNCryptor(cli, "m.enc", plaintext: plaintext, passphrase: Self.passphrase)
        let outcome = try await Self.run(
            cli, ["-c", "exec \"$0\" decrypt m.enc --passphrase-file <(printf '%s\\n' \"$P\") --stdout", CLI.binary.path],
            environment: ["P": Self.passphrase], executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout == plaintext)
    }

    // MARK: RNCryptor key files

    @Test("an RNCryptor key file that never ends is refused after 4097 bytes, not read whole")
    func endlessKeyFileIsBounded() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        cli.write("m.enc", Data([3, 0]) + Data(repeating: 0, count: 80))
        Self.makeFIFO(cli, "keys")
        let writer = open(cli.path("keys"), O_RDWR | O_CLOEXEC)
        try #require(writer >= 0)
        defer { close(writer) }
        let queued = [UInt8](repeating: UInt8(ascii: " "), count: 8192)
        #expect(queued.withUnsafeBytes { write(writer, $0.baseAddress!, $0.count) } == queued.count)

        let outcome = try await Self.run(cli, ["decrypt", "m.enc", "--rncryptor-key-file", "keys", "-o", "out"])
        #expect(outcome.status == 66, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("over 4096 bytes"), "\(outcome.stderr)")

        // 128 hex digits padded with whitespace to exactly 4096 bytes are still read.
        let hex = String(repeating: "0f", count: 64)
        cli.writeSecret("padded", Data((hex + String(repeating: " ", count: 4096 - hex.count)).utf8))
        let padded = try await Self.run(cli, ["decrypt", "m.enc", "--rncryptor-key-file", "padded", "-o", "out"])
        #expect(padded.status == 65, "\(padded.stderr)")  // read, then the HMAC does not match
        cli.writeSecret("over", Data((hex + String(repeating: " ", count: 4097 - hex.count)).utf8))
        #expect(try await Self.run(cli, ["decrypt", "m.enc", "--rncryptor-key-file", "over", "-o", "out"]).status == 66)
    }
}
