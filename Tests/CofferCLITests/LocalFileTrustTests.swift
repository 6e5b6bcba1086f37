import Coffer
import CofferFormat
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the CLI reads from local files is trusted only when the file or folder is the user's own
/// and private: secret input files, the cache folder of `coffer sync` and `coffer open`, the device
/// key of `coffer device fetch-key`; and a local container's header is read within the limit the
/// server keeps to.
@Suite("Local files the CLI trusts")
struct LocalFileTrustTests {
    /// No saved login, and a server nobody answers on: the refusals come before any request.
    static let offline = ["COFFER_SERVER": "http://127.0.0.1:9", "COFFER_TOKEN": "cft_unused", "COFFER_CONFIG_DIR": "/nonexistent-coffer-config"]

    @Test("makePrivateFolder refuses a symbolic link to a folder, and leaves that folder as it was")
    func cacheSymlinkRefused() throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let target = cli.path("documents")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
        #expect(chmod(target, 0o755) == 0)
        try FileManager.default.createSymbolicLink(atPath: cli.path("cache"), withDestinationPath: target)
        // Before: stat followed the link; the folder passed, was made 0700 and became the cache.
        #expect(throws: CofferError.self) { try FileKeyStore.makePrivateFolder(cli.path("cache")) }
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_mode & 0o777 == 0o755)
        #expect(cli.listing() == ["cache", "documents"])
    }

    @Test("coffer open checks DIR before it reads sync.json: a symbolic link or a folder others may write in is refused")
    func openChecksFolder() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        for name in ["real", "shared"] {
            try FileManager.default.createDirectory(atPath: cli.path(name), withIntermediateDirectories: false)
            cli.write(name + "/sync.json", Data("not settings".utf8))
        }
        #expect(chmod(cli.path("real"), 0o700) == 0)
        #expect(chmod(cli.path("shared"), 0o770) == 0)
        try FileManager.default.createSymbolicLink(atPath: cli.path("link"), withDestinationPath: cli.path("real"))
        // Before: sync.json was read first ("... is damaged; run coffer sync again").
        for (cache, says) in [("link", "is a symbolic link"), ("shared", "may be written by others (mode 770)")] {
            let result = try await cli.run("open", "--cache", cache, "--collection", "C", "M", "--stdout")
            #expect(result.status == 64, "\(cache): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(says), "\(cache): \(result.stderr)")
            #expect(!result.stderr.contains("damaged"), "\(result.stderr)")
        }
        let missing = try await cli.run("open", "--cache", "missing", "--collection", "C", "M", "--stdout")
        #expect(missing.status == 66 && missing.stderr.contains("run coffer sync first"), "\(missing.stderr)")
    }

    /// Each option that names a secret file, given one that others may read (mode 0644).
    static let secretOptions: [[String]] = [
        ["decrypt", "m.enc", "--passphrase-file", "secret", "-o", "out"],
        ["encrypt", "m.bin", "--passphrase-file", "secret", "-o", "out"],
        ["encrypt", "m.bin", "--key", "secret", "-o", "out"],
        ["decrypt", "m.enc", "--rncryptor-key-file", "secret", "-o", "out"],
        ["login", "--server", "http://127.0.0.1:9", "--token-file", "secret"],
        ["invitation", "accept", "--code-file", "secret"],
        ["device", "fetch-key", "k1", "--server", "http://127.0.0.1:9", "--app-id", "a", "--credential-file", "secret"],
        ["manifest", "--server", "http://127.0.0.1:9", "--app", "6F9619FF-8B86-D011-B42D-00C04FC964FF", "--credential-file", "secret",
         "--collection", "C"],
    ]

    @Test("a secret file others may read is refused in one line (77), its content never shown", arguments: secretOptions)
    func readableSecretRefused(arguments: [String]) async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        cli.write("m.bin", Data("model".utf8))
        cli.write("m.enc", Data([3, 0]) + Data(repeating: 0, count: 80))
        try await cli.run("key", "generate", "--name", "k")
        // A valid secret of each kind would do; the content is a model key file's for --key.
        var content = Data((String(repeating: "0f", count: 64) + "\n").utf8)
        if arguments.contains("--key") { content = try #require(cli.read("k.modelkey")) }
        cli.write("secret", content)
        #expect(chmod(cli.path("secret"), 0o644) == 0)
        // Before: read as any file (the command went on to decrypt, encrypt or call the server).
        let result = try await cli.run(arguments, environment: Self.offline)
        #expect(result.status == 77, "\(arguments): \(result.stderr)")
        #expect(result.stderr == "coffer: \(Self.what(arguments)) secret may be read or written by others (mode 644); chmod 600 it\n", "\(result.stderr)")
        #expect(!cli.listing().contains("out"))
    }

    static func what(_ arguments: [String]) -> String {
        if arguments.contains("--key") { return "model key file" }
        if arguments.contains("--passphrase-file") { return "passphrase file" }
        if arguments.contains("--rncryptor-key-file") { return "RNCryptor key file" }
        if arguments.contains("--token-file") { return "token file" }
        if arguments.contains("--code-file") { return "invitation code file" }
        return "credential file"
    }

    @Test("device fetch-key does not follow a symbolic link at its device key file")
    func deviceKeySymlinkRefused() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        cli.writeSecret("app.credential", Data("cfa_credential\n".utf8))
        try FileManager.default.createDirectory(atPath: cli.path("elsewhere"), withIntermediateDirectories: false)
        let key = Data("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n".utf8)
        cli.writeSecret("elsewhere/key", key)
        try FileManager.default.createSymbolicLink(atPath: cli.path("coffer-device.key"), withDestinationPath: cli.path("elsewhere/key"))
        // Before: the link was followed and its target used as this device's key (then: no server, 69).
        let result = try await cli.run(["device", "fetch-key", "k1", "--server", "http://127.0.0.1:9", "--app-id", "a",
                                        "--credential-file", "app.credential"], environment: Self.offline)
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr == "coffer: device key file coffer-device.key is a symbolic link; give the file itself\n", "\(result.stderr)")
        // A device key file others may read is refused as any secret file.
        try FileManager.default.removeItem(atPath: cli.path("coffer-device.key"))
        cli.write("coffer-device.key", key)
        #expect(chmod(cli.path("coffer-device.key"), 0o640) == 0)
        let readable = try await cli.run(["device", "fetch-key", "k1", "--server", "http://127.0.0.1:9", "--app-id", "a",
                                          "--credential-file", "app.credential"], environment: Self.offline)
        #expect(readable.status == 77 && readable.stderr.contains("device key file coffer-device.key may be read or written by others"),
                "\(readable.stderr)")
    }

    @Test("decrypt and blob upload refuse a local container whose header is over the limit, in one line")
    func hugeHeaderRefused() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let preamble = try HugeHeaderContainer.write(cli, "huge.coffer")
        try await cli.run("key", "generate", "--name", "k")
        // Before: the whole table was read and held, then the key refused ("sealed with model key ...").
        for arguments in [["decrypt", "huge.coffer", "--key", "k.modelkey", "-o", "out"],
                          ["decrypt", "huge.coffer", "--key", "k.modelkey", "--stdout"],
                          ["blob", "upload", "--team", "T", "huge.coffer", "--key", "k.modelkey"]] {
            let result = try await cli.run(arguments, environment: Self.offline)
            #expect(HugeHeaderContainer.refused(result, preamble), "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stdout.isEmpty && !cli.listing().contains("out"), "\(arguments)")
        }
    }
}
