import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `coffer-server serve` with a `master.key` it cannot use: it stops at once with one line naming
/// the file and the reason, never the file's bytes, and never writes a new key over it (that
/// would orphan every wrapped model key).
@Suite("coffer-server with a bad master key file")
struct ServerMasterKeyFileTests {
    /// Starts `serve` on a data folder whose `master.key` `make` creates; returns the exit status
    /// (nil if it kept running), the output and the data folder's path.
    private func start(_ make: @escaping (String) throws -> Void) async throws -> (status: Int32?, output: String, run: ServerOperatorTests.Run) {
        let run = try ServerOperatorTests.Run(prepare: { data in
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try make(data + "/master.key")
        })
        let status = await run.exitStatus(within: 60)
        if status == nil { _ = await run.stop() }
        return (status, run.output, run)
    }

    @Test("a master.key that is not a regular file (a link to /dev/zero, a pipe nobody writes to) is refused at once, not read for ever")
    func notARegularFile() async throws {
        guard ServerOperatorTests.binaryExists() else { return }
        let makers: [(String, (String) throws -> Void)] = [
            ("/dev/zero", { try FileManager.default.createSymbolicLink(atPath: $0, withDestinationPath: "/dev/zero") }),
            ("a pipe", { guard mkfifo($0, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown) } }),
        ]
        for (what, make) in makers {
            let (status, output, run) = try await start(make)
            defer { run.cleanUp() }
            #expect(status != nil && status != 0, "\(what): \(output)")
            #expect(output.contains("cannot read the master key file \(run.data)/master.key: not a regular file"), "\(what): \(output)")
            // `coffer-server check` says the same as a problem (exit 78), and ends.
            let check = try await ServerOperatorTests.check(data: run.data, [:])
            #expect(check.status == 78, "\(what): \(check.stdout) \(check.stderr)")
            #expect(check.stderr.contains("cannot read the master key file \(run.data)/master.key: not a regular file"), "\(check.stderr)")
        }
    }

    @Test("a master.key that is a link to a missing file is an error (start and check), and no key is made through it")
    func danglingLink() async throws {
        guard ServerOperatorTests.binaryExists() else { return }
        let (status, output, run) = try await start { path in
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".gone")
        }
        defer { run.cleanUp() }
        #expect(status != nil && status != 0, "\(output)")
        #expect(output.contains("the master key file \(run.data)/master.key is a link to a missing file"), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: run.data + "/master.key.gone"))
        let check = try await ServerOperatorTests.check(data: run.data, [:])
        #expect(check.status == 78, "\(check.stdout) \(check.stderr)")
        #expect(check.stderr.contains("is a link to a missing file"), "\(check.stderr)")
    }

    @Test("a master.key that cannot be read (a folder) is an error, and no new key is made in its place")
    func unreadable() async throws {
        guard ServerOperatorTests.binaryExists() else { return }
        let (status, output, run) = try await start { path in
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        defer { run.cleanUp() }
        #expect(status != nil && status != 0, "\(output)")
        #expect(output.contains("cannot read the master key file \(run.data)/master.key: Is a directory"), "\(output)")
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: run.data + "/master.key", isDirectory: &isFolder) && isFolder.boolValue)
    }

    @Test("a master.key holding something else is refused with one line that does not show its bytes")
    func notAKey() async throws {
        guard ServerOperatorTests.binaryExists() else { return }
        let secret = "not-a-key-but-a-secret-" + UUID().uuidString
        let (status, output, run) = try await start { path in
            try Data(secret.utf8).write(to: URL(fileURLWithPath: path))
        }
        defer { run.cleanUp() }
        #expect(status != nil && status != 0, "\(output)")
        #expect(output.contains("the master key file \(run.data)/master.key does not hold 32 bytes in base64"), "\(output)")
        #expect(!output.contains(secret))
        #expect(try String(contentsOfFile: run.data + "/master.key", encoding: .utf8) == secret)
    }
}
