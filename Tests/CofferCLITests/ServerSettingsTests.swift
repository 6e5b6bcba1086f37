import Foundation
import Testing

/// The built `coffer-server` refuses a setting it cannot use: one line on stderr naming it, a
/// non-zero exit, and nothing written (no data folder).
@Suite("coffer-server settings")
struct ServerSettingsTests {
    /// Runs `coffer-server ARGUMENTS` in a fresh folder with only `environment`'s COFFER_* variables;
    /// returns the result and whether the data folder it was given exists afterwards.
    static func run(_ arguments: [String], environment: [String: String]) async throws -> (CLI.Result, dataFolderExists: Bool) {
        let cli = CLI()
        defer { cli.cleanUp() }
        var clean = ProcessInfo.processInfo.environment.filter { $0.key.hasPrefix("COFFER_") }.mapValues { _ in "" }
        clean.merge(environment) { $1 }
        clean["COFFER_DATA_DIR"] = cli.path("data")
        let result = try await cli.run(arguments, environment: clean, binary: AdminServer.binary, terminateAfter: 30)
        return (result, FileManager.default.fileExists(atPath: cli.path("data")))
    }

    static func expectRefused(_ arguments: [String], _ environment: [String: String], naming setting: String,
                              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        guard FileManager.default.isExecutableFile(atPath: AdminServer.binary.path) else {
            Issue.record("\(AdminServer.binary.path) is missing: build it with `swift build --product coffer-server`")
            return
        }
        let (result, exists) = try await run(arguments, environment: environment)
        #expect(result.status == 78, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line, not: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("coffer-server: \(setting) must be "), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(!exists, "the data folder was created before the refusal", sourceLocation: sourceLocation)
        for value in environment.values where value.count > 3 {
            #expect(!result.stderr.contains(value) && !result.stdout.contains(value), "the value is not echoed", sourceLocation: sourceLocation)
        }
    }

    @Test("COFFER_PORT=80a stops the server with one line naming COFFER_PORT, before the data folder exists")
    func portWithLetters() async throws {
        try await Self.expectRefused(["serve"], ["COFFER_PORT": "80a"], naming: "COFFER_PORT")
    }

    @Test("a bad flag is named as the flag, by the same rule")
    func badFlags() async throws {
        try await Self.expectRefused(["serve", "--port", "70000"], [:], naming: "--port")
        try await Self.expectRefused(["serve", "--device-port=-1"], [:], naming: "--device-port")
        try await Self.expectRefused(["collect-blobs", "--grace-hours", "nan"], [:], naming: "--grace-hours")
    }

    @Test("a weak bootstrap token is refused at start, and never printed")
    func weakBootstrapToken() async throws {
        try await Self.expectRefused(["serve"], ["COFFER_BOOTSTRAP_TOKEN": "cft_hunter2hunter2"], naming: "COFFER_BOOTSTRAP_TOKEN")
    }

    @Test("COFFER_MAX_BLOB_SIZE over a bucket's 10,000 parts stops serve and check alike, in one line, before anything is made")
    func blobSizeOverBucketParts() async throws {
        // Refused while the settings are read (SettingSource), which serve and check share: no bucket is asked.
        let environment = ["COFFER_BLOB_STORE": "s3://models", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
                           "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY", "COFFER_MAX_BLOB_SIZE": "83886080001"]
        for command in ["serve", "check"] {
            try await Self.expectRefused([command], environment, naming: "COFFER_MAX_BLOB_SIZE")
        }
    }

    @Test("other subcommands read the settings the same way")
    func otherSubcommands() async throws {
        try await Self.expectRefused(["public-key"], ["COFFER_MASTER_KEY": "not-a-key"], naming: "COFFER_MASTER_KEY")
        try await Self.expectRefused(["public-key"], ["COFFER_DATABASE_URL": "postgres://:secret-password@/db"], naming: "COFFER_DATABASE_URL")
    }
}
