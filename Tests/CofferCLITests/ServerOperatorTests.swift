import BlockingTestSupport
import Crypto
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The built `coffer-server` as an operator runs it: what a start prints (a short greeting, no
/// migration lines, never the token), LOG_LEVEL and `--log-format json`, `/metrics`' histograms,
/// a clean stop on SIGTERM, and `coffer-server check`.
@Suite("coffer-server for operators")
struct ServerOperatorTests {
    /// A `coffer-server serve` process with a fresh data folder and only `environment`'s settings.
    final class Run: @unchecked Sendable {
        let folder: URL
        let data: String
        let port: Int
        let process: ChildProcess
        private let log: URL

        /// `prepare` gets the data folder's path (not yet created) before the process starts;
        /// `umask`, the file mode creation mask of the server alone (``launch(_:_:umask:)``).
        init(_ arguments: [String] = [], environment: [String: String] = [:], umask: Int? = nil,
             prepare: (String) throws -> Void = { _ in }) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-operator-" + UUID().uuidString)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            data = folder.appendingPathComponent("data").path
            try prepare(data)
            port = try AdminServer.freePort()
            var clean = ProcessInfo.processInfo.environment
            for name in clean.keys where name.hasPrefix("COFFER_") || name.hasPrefix("LOG_") { clean[name] = nil }
            log = folder.appendingPathComponent("output.log")
            FileManager.default.createFile(atPath: log.path, contents: nil)
            let handle = try FileHandle(forWritingTo: log)
            defer { try? handle.close() }
            let launched = ServerOperatorTests.launch(
                AdminServer.binary, ["serve", "--data-dir", data, "--hostname", "127.0.0.1", "--port", String(port)] + arguments, umask: umask)
            process = try ChildProcess(executable: launched.executable, arguments: launched.arguments,
                                       environment: clean.merging(environment) { $1 }, directory: folder,
                                       output: .file(handle), errorOutput: .file(handle))
        }

        var url: String { "http://127.0.0.1:\(port)" }
        var output: String { String(decoding: FileManager.default.contents(atPath: log.path) ?? Data(), as: UTF8.self) }

        /// Waits until `/healthz` answers; false if the process stopped or 90 s passed.
        func waitUntilHealthy() async -> Bool {
            await AdminServer.waitUntilHealthy(url, while: process)
        }

        /// The exit status once the process stops by itself, nil if it still runs after `seconds`.
        func exitStatus(within seconds: TimeInterval) async -> Int32? {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(100)) }
            guard !process.isRunning else { return nil }
            return process.wait()
        }

        /// SIGTERM, then its exit status (killed after 30 s).
        func stop() async -> Int32 {
            await offThePool { [self] in stopNow() }
        }

        private func stopNow() -> Int32 {
            process.signal(SIGTERM)
            if let status = process.wait(timeout: 30) { return status }
            process.signal(SIGKILL)
            return process.wait()
        }

        func cleanUp() { try? FileManager.default.removeItem(at: folder) }
    }

    /// `executable` with `arguments` as a child is started: when `umask` is given, through
    /// `sh -c 'umask MASK && exec "$0" "$@"'`, so that the mask is the child's alone (the test
    /// process's is every test's that runs in it, and tests run in parallel).
    static func launch(_ executable: URL, _ arguments: [String], umask: Int?) -> (executable: URL, arguments: [String]) {
        guard let umask else { return (executable, arguments) }
        return (URL(fileURLWithPath: "/bin/sh"), ["-c", "umask \(String(umask, radix: 8)) && exec \"$0\" \"$@\"", executable.path] + arguments)
    }

    static func binaryExists() -> Bool {
        guard FileManager.default.isExecutableFile(atPath: AdminServer.binary.path) else {
            Issue.record("\(AdminServer.binary.path) is missing: build it with `swift build --product coffer-server`")
            return false
        }
        return true
    }

    /// The body of a GET, or "" when nothing answered.
    static func body(_ address: String) async -> String {
        await offThePool { bodyNow(address) }
    }

    private static func bodyNow(_ address: String) -> String {
        let done = DispatchSemaphore(value: 0)
        let box = AdminBox<Data>(Data())
        URLSession.shared.dataTask(with: URL(string: address)!) { data, _, _ in
            box.set(data ?? Data())
            done.signal()
        }.resume()
        done.wait()
        return String(decoding: box.get(), as: UTF8.self)
    }

    @Test("a first start prints a short greeting: address, dashboard, the token's file (not the token), data folder; no migration lines")
    func greeting() async throws {
        guard Self.binaryExists() else { return }
        let run = try Run()
        defer { run.cleanUp() }
        let healthy = await run.waitUntilHealthy()
        #expect(healthy, "\(run.output)")
        // Per-route histograms from Vapor, through swift-metrics, in /metrics.
        _ = await AdminServer.get(run.url + "/healthz")
        let metrics = await Self.body(run.url + "/metrics")
        #expect(metrics.contains("http_request_duration_seconds_bucket{method=\"GET\",path=\"/healthz\",status=\"200\",le=\"0.0005\"}"),
                "\(metrics.prefix(1500))")
        #expect(metrics.contains("coffer_http_requests_total{"))
        let status = await run.stop()
        let output = run.output
        #expect(status == 0, "SIGTERM is a clean stop: \(output)")
        let lines = output.split(separator: "\n")
        #expect(lines.count <= 8, "a short greeting, not: \(output)")
        #expect(!output.contains("prepare"), "migrations log at debug: \(output)")
        #expect(output.contains("Coffer is listening on http://127.0.0.1:\(run.port)"), "\(output)")
        #expect(output.contains("Dashboard: http://127.0.0.1:\(run.port)/dashboard/"), "\(output)")
        #expect(output.contains("\(run.data)/bootstrap-token (mode 0600)"), "\(output)")
        #expect(output.contains("Data folder: \(URL(fileURLWithPath: run.data).standardizedFileURL.path)"), "\(output)")
        let token = try #require(FileManager.default.contents(atPath: run.data + "/bootstrap-token"))
        let secret = String(decoding: token, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(secret.count > 20 && !output.contains(secret), "the token is in the output")
        #expect(output.contains("Shutting down"), "\(output)")
    }

    @Test("LOG_LEVEL=warning silences the greeting and migrations; debug shows migrations but no SQL; --log-level wins over LOG_LEVEL")
    func logLevel() async throws {
        guard Self.binaryExists() else { return }
        for (arguments, environment, quiet) in [([String](), ["LOG_LEVEL": "warning"], true), (["--log-level", "warning"], ["LOG_LEVEL": "debug"], true),
                                                ([], ["LOG_LEVEL": "DEBUG"], false)] {
            let run = try Run(arguments, environment: environment)
            defer { run.cleanUp() }
            #expect(await run.waitUntilHealthy(), "\(run.output)")
            #expect(await run.stop() == 0)
            let output = run.output
            if quiet {
                // Vapor's serve command prints an empty line on SIGINT/SIGTERM (to clear a ^C).
                #expect(output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(arguments) \(environment): \(output)")
            } else {
                #expect(output.contains("[Migrator] Starting prepare") && output.contains(" debug "), "\(output.prefix(1000))")
                #expect(output.contains("Coffer is listening"))
                // SQL statements carry their values (the bootstrap token's hash, password hashes):
                // they are logged at trace only.
                #expect(!output.contains("INSERT INTO") && !output.contains("CREATE TABLE"), "\(output.prefix(2000))")
            }
        }
    }

    @Test("--log-format json writes one JSON object per line, the greeting's facts as fields")
    func jsonLines() async throws {
        guard Self.binaryExists() else { return }
        let run = try Run(["--log-format", "json"], environment: ["COFFER_DEVICE_PORT": "0"])
        defer { run.cleanUp() }
        #expect(await run.waitUntilHealthy(), "\(run.output)")
        #expect(await run.stop() == 0)
        let lines = run.output.split(separator: "\n")
        #expect(lines.count >= 4)
        var messages: [[String: Any]] = []
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "not one JSON object: \(line)")
            if let object { messages.append(object) }
        }
        #expect(messages.allSatisfy { $0["time"] is String && $0["level"] is String && $0["message"] is String && $0["label"] is String })
        let greeting = try #require(messages.first { ($0["message"] as? String)?.hasPrefix("Coffer is listening") == true })
        let fields = try #require(greeting["metadata"] as? [String: Any])
        #expect(fields["address"] as? String == run.url)
        #expect(fields["devicePort"] != nil)
        #expect(messages.contains { ($0["metadata"] as? [String: Any])?["bootstrapTokenFile"] as? String == run.data + "/bootstrap-token" })
    }

    @Test("a log level or format it does not know stops the start with one line, exit 78")
    func badLogSettings() async throws {
        try await ServerSettingsTests.expectRefused(["serve"], ["LOG_LEVEL": "loud"], naming: "LOG_LEVEL")
        try await ServerSettingsTests.expectRefused(["serve", "--log-format", "xml"], [:], naming: "--log-format")
    }

    // MARK: check

    /// `coffer-server check` with the data folder `data` and `environment`.
    static func check(data: String, _ environment: [String: String] = [:], arguments: [String] = []) async throws -> CLI.Result {
        try await server(["check"] + arguments, data: data, environment, within: 60)
    }

    /// `coffer-server ARGUMENTS` run to its end (killed after `seconds`) with the data folder
    /// `data` and only `environment`'s settings; `umask`: its file mode creation mask alone
    /// (``launch(_:_:umask:)``).
    static func server(_ arguments: [String], data: String, _ environment: [String: String] = [:], within seconds: Double,
                       umask: Int? = nil) async throws -> CLI.Result {
        let cli = CLI()
        defer { cli.cleanUp() }
        var clean = ProcessInfo.processInfo.environment.filter { $0.key.hasPrefix("COFFER_") || $0.key.hasPrefix("LOG_") }.mapValues { _ in "" }
        clean.merge(environment) { $1 }
        clean["COFFER_DATA_DIR"] = data
        let launched = launch(AdminServer.binary, arguments, umask: umask)
        return try await cli.run(launched.arguments, environment: clean, binary: launched.executable, terminateAfter: seconds)
    }

    /// A data folder as `serve` leaves it: a server started in it until healthy, then stopped (SIGTERM).
    static func servedFolder() async throws -> Run {
        let run = try Run()
        #expect(await run.waitUntilHealthy(), "\(run.output)")
        #expect(await run.stop() == 0)
        return run
    }

    /// The line check printed after its `coffer-server: ` (its only one), to find in serve's output.
    static func onlyLine(_ result: CLI.Result) -> String? {
        let lines = result.stderr.split(separator: "\n")
        guard lines.count == 1, lines[0].hasPrefix("coffer-server: ") else { return nil }
        return String(lines[0].dropFirst("coffer-server: ".count))
    }

    @Test("check: 0 and a short OK for a fresh folder and for a server's own folder; nothing is created")
    func checkOK() async throws {
        guard Self.binaryExists() else { return }
        let fresh = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-check-" + UUID().uuidString).path
        let first = try await Self.check(data: fresh)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("OK: ") && first.stdout.split(separator: "\n").count == 1, "\(first.stdout)")
        #expect(first.stderr.isEmpty, "\(first.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fresh), "check created the data folder")

        let run = try await Self.servedFolder()
        defer { run.cleanUp() }
        let second = try await Self.check(data: run.data)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("reachable and migrated"), "\(second.stdout)")
        #expect(second.stdout.contains("master key from \(run.data)/master.key"), "\(second.stdout)")
    }

    @Test("check: a missing data folder is tried by making one beside it (and removing it); a file system that refuses is a problem")
    func checkFolderProbe() async throws {
        guard Self.binaryExists() else { return }
        // A writable parent: OK, and the parent is left as it was.
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-check-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let fine = try await Self.check(data: parent + "/data")
        #expect(fine.status == 0, "\(fine.stderr)")
        #expect(fine.stdout.hasPrefix("OK: "), "\(fine.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent).isEmpty, "check left something in \(parent)")

        // procfs takes no new folders, though access() says root may write there.
        let refused = try await Self.check(data: "/proc/coffer-check-\(UUID().uuidString)/data")
        #expect(refused.status == 78, "\(refused.stdout) \(refused.stderr)")
        let lines = refused.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("cannot be created") && lines[0].contains("/proc"), "\(refused.stderr)")
    }

    @Test("check: one line per problem, exit 78, and no secret in what it prints")
    func checkProblems() async throws {
        guard Self.binaryExists() else { return }
        let run = try await Self.servedFolder()
        defer { run.cleanUp() }
        let masterKey = run.data + "/master.key"
        let keyText = String(decoding: FileManager.default.contents(atPath: masterKey) ?? Data(), as: UTF8.self)
        let token = String(decoding: FileManager.default.contents(atPath: run.data + "/bootstrap-token") ?? Data(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)

        // Three problems at once: a master key others can read, a token file others can read, a blob "folder" that is a file.
        chmod(masterKey, 0o644)
        chmod(run.data + "/bootstrap-token", 0o640)
        let blobFile = run.folder.appendingPathComponent("blobs-file").path
        FileManager.default.createFile(atPath: blobFile, contents: Data("x".utf8))
        let result = try await Self.check(data: run.data, ["COFFER_BLOB_DIR": blobFile])
        #expect(result.status == 78, "\(result.stdout) \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 3, "\(result.stderr)")
        #expect(lines.allSatisfy { $0.hasPrefix("coffer-server: ") })
        #expect(lines.contains { $0.contains("master.key") && $0.contains("chmod 600") }, "\(result.stderr)")
        #expect(lines.contains { $0.contains("bootstrap-token") && $0.contains("chmod 600") }, "\(result.stderr)")
        #expect(lines.contains { $0.contains(blobFile) && $0.contains("not a folder") }, "\(result.stderr)")
        chmod(masterKey, 0o600)
        chmod(run.data + "/bootstrap-token", 0o600)

        // Another master key than the one that wrapped the stored keys.
        let other = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
        let wrongKey = try await Self.check(data: run.data, ["COFFER_MASTER_KEY": other])
        #expect(wrongKey.status == 78 && wrongKey.stderr.contains("master key"), "\(wrongKey.stderr)")
        #expect(wrongKey.stderr.split(separator: "\n").count == 1, "\(wrongKey.stderr)")

        // A damaged master key file, and then none while the database holds keys.
        try Data("not base64\n".utf8).write(to: URL(fileURLWithPath: masterKey))
        chmod(masterKey, 0o600)  // private still: only its contents are wrong
        let damaged = try await Self.check(data: run.data)
        #expect(damaged.status == 78 && damaged.stderr.contains("does not hold 32 bytes"), "\(damaged.stderr)")
        try FileManager.default.removeItem(atPath: masterKey)
        let missing = try await Self.check(data: run.data)
        #expect(missing.status == 78 && missing.stderr.contains("master.key is missing"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: masterKey), "check created a master key")

        // A database that does not answer: named by host and port, never by its password.
        let closedPort = try AdminServer.freePort()
        let password = "pw-" + UUID().uuidString
        let database = try await Self.check(data: run.data, ["COFFER_DATABASE_URL": "postgres://coffer:\(password)@127.0.0.1:\(closedPort)/coffer",
                                                       "COFFER_MASTER_KEY": other])
        #expect(database.status == 78, "\(database.stderr)")
        #expect(database.stderr.contains("cannot use the database (PostgreSQL at 127.0.0.1:\(closedPort)/coffer)"), "\(database.stderr)")
        for result in [result, wrongKey, damaged, missing, database] {
            for secret in [password, other, token, keyText.trimmingCharacters(in: .whitespacesAndNewlines)] where !secret.isEmpty {
                #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "a secret in check's output")
            }
        }
    }

    @Test("check: a data folder serve refuses (others may write into it, another account's) is reported with serve's own line; nothing is changed")
    func checkDataFolderRefusals() async throws {
        guard Self.binaryExists() else { return }
        var cases: [(name: String, prepare: (String) throws -> Void, says: String)] = [
            ("group-writable", { data in
                try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
                chmod(data, 0o770)
            }, "other accounts can write into the data folder"),
        ]
        // Another account's folder (root's is accepted): as root, a private folder given to nobody.
        if geteuid() == 0 {
            cases.append(("another account's", { data in
                try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
                chmod(data, 0o700)
                chown(data, 65534, 65534)
            }, "belongs to another account"))
        }
        for (name, prepare, says) in cases {
            let run = try Run(prepare: prepare)
            defer { run.cleanUp() }
            #expect(await run.exitStatus(within: 90) == 1, "\(name): serve did not stop: \(run.output)")
            let before = try FileManager.default.attributesOfItem(atPath: run.data)
            let result = try await Self.check(data: run.data)
            #expect(result.status == 78, "\(name): \(result.stdout) \(result.stderr)")
            let line = Self.onlyLine(result)
            #expect(line?.contains(says) == true && line?.contains(run.data) == true, "\(name): \(result.stderr)")
            #expect(line.map { run.output.contains($0) } == true, "\(name): not serve's line; serve said: \(run.output)")
            let after = try FileManager.default.attributesOfItem(atPath: run.data)
            #expect(after[.posixPermissions] as? Int == before[.posixPermissions] as? Int, "\(name): check changed the mode")
            #expect(after[.ownerAccountID] as? Int == before[.ownerAccountID] as? Int, "\(name): check changed the owner")
            #expect(try FileManager.default.contentsOfDirectory(atPath: run.data).isEmpty, "\(name): something was written into the folder")
        }
    }

    @Test("check: a bootstrap-token file beside a database with no account stops serve, and check says so with serve's line (not with COFFER_BOOTSTRAP_TOKEN); no token is printed")
    func checkStaleBootstrapToken() async throws {
        guard Self.binaryExists() else { return }
        let stale = "cft_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        // A data folder kept from an earlier database (moved to a new PostgreSQL, or emptied): its
        // token file, and no database.
        let plant: (String) throws -> Void = { data in
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            #expect(FileManager.default.createFile(atPath: data + "/bootstrap-token", contents: Data((stale + "\n").utf8),
                                                   attributes: [.posixPermissions: 0o600]))
        }
        let kept = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-check-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: kept) }
        try plant(kept)
        let refused = try await Self.check(data: kept)
        #expect(refused.status == 78, "\(refused.stdout) \(refused.stderr)")
        let line = Self.onlyLine(refused)
        #expect(line?.contains(kept + "/bootstrap-token") == true && line?.contains("COFFER_BOOTSTRAP_TOKEN") == true, "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: kept) == ["bootstrap-token"], "check created something")

        // With COFFER_BOOTSTRAP_TOKEN a first start makes admin with that token and leaves the file alone.
        let chosen = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let given = try await Self.check(data: kept, ["COFFER_BOOTSTRAP_TOKEN": chosen])
        #expect(given.status == 0 && given.stdout.hasPrefix("OK: "), "\(given.stdout) \(given.stderr)")

        // serve stops there, after making its tables; check, finding them without an account, says what serve said.
        let run = try Run(prepare: plant)
        defer { run.cleanUp() }
        #expect(await run.exitStatus(within: 90) == 1, "serve did not stop: \(run.output)")
        let after = try await Self.check(data: run.data)
        #expect(after.status == 78, "\(after.stdout) \(after.stderr)")
        let served = Self.onlyLine(after)
        #expect(served?.contains("bootstrap-token") == true, "\(after.stderr)")
        #expect(served.map { run.output.contains($0) } == true, "not serve's line: \(after.stderr); serve said: \(run.output)")
        for result in [refused, given, after] {
            for secret in [stale, chosen] {
                #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "a token in check's output")
            }
        }
        #expect(!run.output.contains(stale))
    }

    @Test("rotate-master-key refuses a new key file others may read (one line, chmod 600, exit 77, nothing changed) and takes it 0600; check then names the kept key a database from before the rotation needs")
    func rotateRefusesOpenKeyFile() async throws {
        guard Self.binaryExists() else { return }
        let run = try await Self.servedFolder()
        defer { run.cleanUp() }
        let masterKey = run.data + "/master.key"
        let before = FileManager.default.contents(atPath: masterKey)
        let newKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let newKeyFile = run.folder.appendingPathComponent("new-master.key").path
        try Data((newKey + "\n").utf8).write(to: URL(fileURLWithPath: newKeyFile))
        chmod(newKeyFile, 0o644)
        let rotate = ["rotate-master-key", "--new-key-file", newKeyFile]

        let refused = try await Self.server(rotate, data: run.data, within: 60)
        #expect(refused.status == 77, "\(refused.stdout) \(refused.stderr)")
        let line = Self.onlyLine(refused)
        #expect(line?.contains(newKeyFile) == true && line?.contains("chmod 600") == true, "\(refused.stderr)")
        #expect(FileManager.default.contents(atPath: masterKey) == before)
        #expect(!FileManager.default.fileExists(atPath: masterKey + ".next"))
        let unchanged = try await Self.check(data: run.data)
        #expect(unchanged.status == 0, "\(unchanged.stderr)")

        let database = run.data + "/coffer.sqlite", backup = run.folder.appendingPathComponent("backup.sqlite").path
        try Self.copyDatabase(database, to: backup)
        chmod(newKeyFile, 0o600)
        let rotated = try await Self.server(rotate, data: run.data, within: 120)
        #expect(rotated.status == 0, "\(rotated.stdout) \(rotated.stderr)")
        #expect(rotated.stdout.contains("re-wrapped"), "\(rotated.stdout)")

        // The database restored from before the rotation: check names both keys by ID and the kept file that opens it.
        let oldKey = String(decoding: try #require(before), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let oldID = try Self.masterKeyID(oldKey), newID = try Self.masterKeyID(newKey)
        let kept = "\(masterKey).previous-\(oldID)"
        try Self.copyDatabase(backup, to: database)
        let restored = try await Self.check(data: run.data)
        #expect(restored.status == 78, "\(restored.stdout) \(restored.stderr)")
        let advice = Self.onlyLine(restored) ?? ""
        #expect(advice.contains("master key \(oldID)") && advice.contains("master key \(newID)") && advice.contains(kept), "\(restored.stderr)")
        // As it says: the kept file put back (the new key aside) opens the restored database.
        try FileManager.default.moveItem(atPath: masterKey, toPath: run.folder.appendingPathComponent("after-rotation.key").path)
        try FileManager.default.moveItem(atPath: kept, toPath: masterKey)
        let putBack = try await Self.check(data: run.data)
        #expect(putBack.status == 0, "\(putBack.stderr)")
        for result in [refused, rotated, restored, putBack] {
            for secret in [newKey, oldKey] {
                #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "a master key in coffer-server's output")
            }
        }
    }

    /// Copies an SQLite database with its write-ahead log and shared-memory files (those absent are absent in the copy too).
    static func copyDatabase(_ source: String, to destination: String) throws {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: destination + suffix)
            if FileManager.default.fileExists(atPath: source + suffix) {
                try FileManager.default.copyItem(atPath: source + suffix, toPath: destination + suffix)
            }
        }
    }

    /// A master key's ID as the server names it: the first 16 hex digits of SHA-256 of its 32 bytes.
    static func masterKeyID(_ base64: String) throws -> String {
        let raw = try #require(Data(base64Encoded: base64))
        return String(SHA256.hash(data: raw).map { String(format: "%02x", $0) }.joined().prefix(16))
    }

    @Test("check: a COFFER_HOSTNAME that is no address of this machine is refused, as serve's listener refuses it")
    func checkListenAddress() async throws {
        guard Self.binaryExists() else { return }
        // 192.0.2.1 (TEST-NET-1, RFC 5737) is no machine's own address, unless non-local binds are allowed.
        let nonlocal = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_nonlocal_bind", encoding: .utf8))?.hasPrefix("1") == true
        guard !nonlocal else { return }
        let reason = String(cString: strerror(EADDRNOTAVAIL))
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-check-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let result = try await Self.check(data: data, arguments: ["--hostname", "192.0.2.1", "--port", "0"])
        #expect(result.status == 78, "\(result.stdout) \(result.stderr)")
        let line = Self.onlyLine(result)
        #expect(line?.contains("cannot listen on 192.0.2.1:0") == true && line?.contains("COFFER_HOSTNAME") == true
                && line?.contains(reason) == true, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: data), "check created the data folder")

        let served = try await Self.server(["serve", "--hostname", "192.0.2.1", "--port", "0"], data: data, within: 120)
        #expect(served.status == 1 && served.stderr.contains("cannot start") && served.stderr.contains(reason), "\(served.stderr)")
    }

    @Test("check over PostgreSQL: reachable before and after the first start; a wrong password is named by the server's message, never shown",
          .enabled(if: ProcessInfo.processInfo.environment["COFFER_TEST_DATABASE_URL"] != nil))
    func checkPostgres() async throws {
        guard Self.binaryExists() else { return }
        let admin = try #require(ProcessInfo.processInfo.environment["COFFER_TEST_DATABASE_URL"])
        var components = try #require(URLComponents(string: admin))
        let name = "coffer_check_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(12)
        @Sendable func psql(_ command: String) throws -> Int32 {
            try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["psql", admin, "-qc", command]).status
        }
        #expect(try await offThePool { try psql("CREATE DATABASE \(name)") } == 0)
        defer { _ = try? psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        components.path = "/" + name
        let url = try #require(components.string)
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-check-" + UUID().uuidString).path
        let masterKey = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
        let empty = try await Self.check(data: data, ["COFFER_DATABASE_URL": url, "COFFER_MASTER_KEY": masterKey])
        #expect(empty.status == 0 && empty.stdout.contains("reachable; its tables are created on first start"), "\(empty.stdout) \(empty.stderr)")

        let run = try Run(environment: ["COFFER_DATABASE_URL": url, "COFFER_MASTER_KEY": masterKey])
        defer { run.cleanUp() }
        #expect(await run.waitUntilHealthy(), "\(run.output)")
        #expect(await run.stop() == 0)
        let migrated = try await Self.check(data: run.data, ["COFFER_DATABASE_URL": url, "COFFER_MASTER_KEY": masterKey])
        #expect(migrated.status == 0 && migrated.stdout.contains("reachable and migrated"), "\(migrated.stdout) \(migrated.stderr)")

        let password = "wrong-" + UUID().uuidString
        components.password = password
        let refused = try await Self.check(data: run.data, ["COFFER_DATABASE_URL": try #require(components.string), "COFFER_MASTER_KEY": masterKey])
        #expect(refused.status == 78 && refused.stderr.contains("password authentication failed"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(!refused.stderr.contains(password) && !refused.stdout.contains(password))
    }
}
