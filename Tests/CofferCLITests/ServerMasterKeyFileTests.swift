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

    /// Writes `text` to a new file at `path` with `mode` (whatever the umask).
    static func write(_ text: String, to path: String, mode: mode_t) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        guard chmod(path, mode) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// A new master key, base64, as `openssl rand -base64 32` makes one.
    static func newKey() -> String {
        Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    @Test("a master.key others may read (0644: restored from a backup, copied) stops serve, check and rotate-master-key with one line naming it and chmod 600, never the key; 0600 starts; with COFFER_MASTER_KEY the file is not read")
    func readableByOthers() async throws {
        guard ServerOperatorTests.binaryExists() else { return }
        let key = Self.newKey()
        let (status, output, run) = try await start { path in try Self.write(key + "\n", to: path, mode: 0o644) }
        defer { run.cleanUp() }
        let keyFile = run.data + "/master.key"
        #expect(status == 1, "serve started with a master key others may read: \(output)")

        // check reports it with serve's own line, and only it (exit 78).
        let check = try await ServerOperatorTests.check(data: run.data)
        #expect(check.status == 78, "\(check.stdout) \(check.stderr)")
        let line = try #require(ServerOperatorTests.onlyLine(check), "\(check.stderr)")
        #expect(line.contains(keyFile) && line.contains("mode 644") && line.contains("chmod 600"), "\(line)")
        #expect(output.contains(line), "not serve's line: \(line); serve said: \(output)")

        // rotate-master-key stops at it too (77, as for its own key file), before anything is written.
        let newKeyFile = run.folder.appendingPathComponent("new-master.key").path
        let newKey = Self.newKey()
        try Self.write(newKey + "\n", to: newKeyFile, mode: 0o600)
        let rotate = try await ServerOperatorTests.server(["rotate-master-key", "--new-key-file", newKeyFile], data: run.data, within: 60)
        #expect(rotate.status == 77, "\(rotate.stdout) \(rotate.stderr)")
        #expect(rotate.stderr.contains("coffer-server: " + line), "\(rotate.stderr)")
        #expect(!FileManager.default.fileExists(atPath: keyFile + ".next"))
        #expect(try String(contentsOfFile: keyFile, encoding: .utf8) == key + "\n", "the key file was changed")

        // COFFER_MASTER_KEY is not a file: the one in the folder is not read.
        let given = try await ServerOperatorTests.check(data: run.data, ["COFFER_MASTER_KEY": key])
        #expect(given.status == 0, "\(given.stdout) \(given.stderr)")

        // chmod 600, as the line says: check takes the same file, and serve starts with it.
        #expect(chmod(keyFile, 0o600) == 0)
        let fixed = try await ServerOperatorTests.check(data: run.data)
        #expect(fixed.status == 0 && fixed.stdout.contains("master key from \(keyFile)"), "\(fixed.stdout) \(fixed.stderr)")
        let served = try ServerOperatorTests.Run(prepare: { data in
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Self.write(key + "\n", to: data + "/master.key", mode: 0o600)
        })
        defer { served.cleanUp() }
        #expect(await served.waitUntilHealthy(), "\(served.output)")
        #expect(await served.stop() == 0)
        #expect(try String(contentsOfFile: served.data + "/master.key", encoding: .utf8) == key + "\n", "the key was replaced")
        for text in [output, check.stdout, check.stderr, rotate.stdout, rotate.stderr, given.stdout, given.stderr, fixed.stdout, fixed.stderr, served.output] {
            #expect(!text.contains(key) && !text.contains(newKey), "a master key in coffer-server's output")
        }
    }

    @Test("a master.key.next others may read (a rotation's new key, restored 0644) stops serve with one line naming it and chmod 600, check's line; it is neither removed nor moved")
    func pendingReadableByOthers() async throws {
        guard ServerOperatorTests.binaryExists() else { return }
        let key = Self.newKey(), next = Self.newKey()
        let (status, output, run) = try await start { path in
            try Self.write(key + "\n", to: path, mode: 0o600)
            try Self.write(next + "\n", to: path + ".next", mode: 0o644)
        }
        defer { run.cleanUp() }
        let pending = run.data + "/master.key.next"
        #expect(status == 1, "serve started with a pending master key others may read: \(output)")
        let check = try await ServerOperatorTests.check(data: run.data)
        #expect(check.status == 78, "\(check.stdout) \(check.stderr)")
        let line = try #require(ServerOperatorTests.onlyLine(check), "\(check.stderr)")
        #expect(line.contains(pending) && line.contains("mode 644") && line.contains("chmod 600"), "\(line)")
        #expect(output.contains(line), "not serve's line: \(line); serve said: \(output)")
        // Settling neither removed it nor put it in place of master.key.
        #expect(try String(contentsOfFile: pending, encoding: .utf8) == next + "\n")
        #expect(try String(contentsOfFile: run.data + "/master.key", encoding: .utf8) == key + "\n")
        for text in [output, check.stdout, check.stderr] {
            #expect(!text.contains(key) && !text.contains(next), "a master key in coffer-server's output")
        }
    }

    /// The mode of the file at `path` (its permission bits), nil when it cannot be learnt.
    static func mode(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_mode & 0o7777)
    }

    /// `coffer-server serve` on the data folder `data` until it stops by itself (at most 60 s): a
    /// start that is refused.
    static func refusedStart(data: String) async throws -> CLI.Result {
        try await ServerOperatorTests.server(["serve", "--hostname", "127.0.0.1", "--port", "0"], data: data, within: 60)
    }

    /// `serve`, `check` and `rotate-master-key` on `data` with a pending key file the server must
    /// refuse: serve exits 1, check 78 with one line naming `pending` and containing `advice`,
    /// serve's output holds that line, and a rotation exits `rotateStatus` with it. Returns the line
    /// and every output, and the rotation's new key (which no output may show).
    static func refusedPending(_ pending: String, data: String, folder: URL, advice: String, rotateStatus: Int32,
                               _ what: String) async throws -> (line: String, outputs: [String], newKey: String) {
        let serve = try await refusedStart(data: data)
        #expect(serve.status == 1, "\(what): \(serve.stdout) \(serve.stderr)")
        let check = try await ServerOperatorTests.check(data: data)
        #expect(check.status == 78, "\(what): \(check.stdout) \(check.stderr)")
        let line = try #require(ServerOperatorTests.onlyLine(check), "\(what): \(check.stderr)")
        #expect(line.contains(pending) && line.contains(advice), "\(what): \(line)")
        #expect((serve.stdout + serve.stderr).contains(line), "\(what): not serve's line: \(line); serve said: \(serve.stderr)")
        let newKeyFile = folder.appendingPathComponent("new-master.key").path
        let fresh = Self.newKey()
        try write(fresh + "\n", to: newKeyFile, mode: 0o600)
        let rotate = try await ServerOperatorTests.server(["rotate-master-key", "--new-key-file", newKeyFile], data: data, within: 60)
        #expect(rotate.status == rotateStatus, "\(what): \(rotate.stdout) \(rotate.stderr)")
        #expect(rotate.stderr.contains("coffer-server: " + line), "\(what): \(rotate.stderr)")
        return (line, [serve.stdout, serve.stderr, check.stdout, check.stderr, rotate.stdout, rotate.stderr], fresh)
    }

    @Test("the files coffer-server writes (master.key, bootstrap-token, a rotation's master.key.next and the master.key.previous-ID it keeps) are 0600 whatever the umask: under umask 477 they were 0200, which the next start could not read; it starts again under that umask")
    func modeWhateverTheUmask() async throws {
        guard ServerOperatorTests.binaryExists() else { return }
        // The mask is the server's alone (sh -c 'umask 477 && exec coffer-server …'): the test
        // process's is every test's. The database file and blob folders are made beforehand, with
        // the test's own mask: SQLite and Foundation make theirs under the process's mask too
        // (0200 and 0300 under 477, which only root could open again), and they are not secret
        // files this test is about.
        let mask = 0o477
        let first = try ServerOperatorTests.Run(umask: mask, prepare: { data in
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            for folder in ["blobs/incoming", "blobs/collecting"] {
                try FileManager.default.createDirectory(atPath: data + "/" + folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            try Self.write("", to: data + "/coffer.sqlite", mode: 0o644)
        })
        defer { first.cleanUp() }
        #expect(await first.waitUntilHealthy(), "\(first.output)")
        #expect(await first.stop() == 0)
        let keyFile = first.data + "/master.key"
        #expect(Self.mode(keyFile) == 0o600, "master.key: \(String(Self.mode(keyFile) ?? -1, radix: 8))")
        let tokenFile = first.data + "/bootstrap-token"
        #expect(Self.mode(tokenFile) == 0o600, "bootstrap-token: \(String(Self.mode(tokenFile) ?? -1, radix: 8))")

        // A rotation under the same mask writes master.key.next, renames it over master.key, and
        // keeps the old key beside it.
        let oldKey = try String(contentsOfFile: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let newKey = Self.newKey()
        let newKeyFile = first.folder.appendingPathComponent("new-master.key").path
        try Self.write(newKey + "\n", to: newKeyFile, mode: 0o600)
        let rotated = try await ServerOperatorTests.server(["rotate-master-key", "--new-key-file", newKeyFile], data: first.data,
                                                           within: 120, umask: mask)
        #expect(rotated.status == 0, "\(rotated.stdout) \(rotated.stderr)")
        let oldID = try ServerOperatorTests.masterKeyID(oldKey)
        let kept = keyFile + ".previous-" + oldID
        #expect(Self.mode(keyFile) == 0o600, "master.key.next, now master.key: \(String(Self.mode(keyFile) ?? -1, radix: 8))")
        #expect(Self.mode(kept) == 0o600, "\(kept): \(String(Self.mode(kept) ?? -1, radix: 8))")
        #expect(try String(contentsOfFile: keyFile, encoding: .utf8) == newKey + "\n")
        #expect(!FileManager.default.fileExists(atPath: keyFile + ".next"))

        // The next start, under the same mask, reads them.
        let again = try ServerOperatorTests.Run(umask: mask, prepare: { data in try FileManager.default.moveItem(atPath: first.data, toPath: data) })
        defer { again.cleanUp() }
        #expect(await again.waitUntilHealthy(), "\(again.output)")
        #expect(await again.stop() == 0)
        for text in [first.output, rotated.stdout, rotated.stderr, again.output] {
            #expect(!text.contains(oldKey) && !text.contains(newKey), "a master key in coffer-server's output")
        }
    }

    @Test("a master.key.next that is no torn write (a pipe, a folder, a private file longer than a rotation writes that holds no key) stops serve (1), check (78, serve's line) and rotate-master-key (1, as for such a master.key) with one line naming it and saying to move it away; it is neither removed nor moved")
    func pendingNotATornWrite() async throws {
        guard ServerOperatorTests.binaryExists() else { return }
        let makers: [(String, (String) throws -> Void)] = [
            ("a pipe", { guard mkfifo($0, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown) } }),
            ("a folder", { try FileManager.default.createDirectory(atPath: $0, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700]) }),
            ("no key, longer than a rotation writes", { try Self.write(String(repeating: "x", count: 100) + "\n", to: $0, mode: 0o600) }),
        ]
        for (what, make) in makers {
            let run = try await ServerOperatorTests.servedFolder()
            defer { run.cleanUp() }
            let keyFile = run.data + "/master.key", pending = keyFile + ".next"
            let key = try String(contentsOfFile: keyFile, encoding: .utf8)
            try make(pending)
            let made = try FileManager.default.attributesOfItem(atPath: pending)[.type] as? FileAttributeType

            let (_, outputs, newKey) = try await Self.refusedPending(pending, data: run.data, folder: run.folder, advice: "move it away",
                                                                     rotateStatus: 1, what)

            // Settling neither removed it nor put it in place of master.key.
            let left = try FileManager.default.attributesOfItem(atPath: pending)[.type] as? FileAttributeType
            #expect(left != nil && left == made, "\(what)")
            #expect(try String(contentsOfFile: keyFile, encoding: .utf8) == key, "\(what)")
            for text in outputs {
                #expect(!text.contains(key.trimmingCharacters(in: .whitespacesAndNewlines)) && !text.contains(newKey), "a master key in coffer-server's output")
            }
        }
    }

    @Test("a master.key.next this account may not open stops serve (1), check (78, serve's line) and rotate-master-key (77) with one line saying what to do, and is neither removed nor moved; done as the line says, check takes it. As root: another account's 0600 file (chown it to this account); as another account: its own, 0200 (chmod 600)")
    func pendingNotOpenable() async throws {
        guard ServerOperatorTests.binaryExists() else { return }
        let run = try await ServerOperatorTests.servedFolder()
        defer { run.cleanUp() }
        let keyFile = run.data + "/master.key", pending = keyFile + ".next"
        let key = try String(contentsOfFile: keyFile, encoding: .utf8), next = Self.newKey()
        // Root opens any file, so as root the rule refuses another account's; any other account
        // cannot open its own 0200 file (as a umask of 477 made them), and the start says why.
        let asRoot = geteuid() == 0
        try Self.write(next + "\n", to: pending, mode: asRoot ? 0o600 : 0o200)
        if asRoot { #expect(chown(pending, 65534, 65534) == 0) }

        let (_, outputs, newKey) = try await Self.refusedPending(pending, data: run.data, folder: run.folder,
                                                                 advice: asRoot ? "chown it to this account" : "chmod 600", rotateStatus: 77,
                                                                 asRoot ? "another account's file" : "its own 0200 file")
        #expect(FileManager.default.fileExists(atPath: pending), "the pending key file was removed")
        #expect(try String(contentsOfFile: keyFile, encoding: .utf8) == key, "master.key was changed")

        // As the line says: this account's, 0600. It holds the key of a rotation that did not
        // commit: check takes it (a start removes it).
        if asRoot { #expect(chown(pending, geteuid(), getegid()) == 0) }
        #expect(chmod(pending, 0o600) == 0)
        #expect(try String(contentsOfFile: pending, encoding: .utf8) == next + "\n")
        let fixed = try await ServerOperatorTests.check(data: run.data)
        #expect(fixed.status == 0, "\(fixed.stdout) \(fixed.stderr)")
        for text in outputs + [fixed.stdout, fixed.stderr] {
            #expect(!text.contains(next) && !text.contains(newKey), "a master key in coffer-server's output")
        }
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
            // Private (0600), as a key file must be: what is refused here is its contents.
            try Self.write(secret, to: path, mode: 0o600)
        }
        defer { run.cleanUp() }
        #expect(status != nil && status != 0, "\(output)")
        #expect(output.contains("the master key file \(run.data)/master.key does not hold 32 bytes in base64"), "\(output)")
        #expect(!output.contains(secret))
        #expect(try String(contentsOfFile: run.data + "/master.key", encoding: .utf8) == secret)
    }
}
