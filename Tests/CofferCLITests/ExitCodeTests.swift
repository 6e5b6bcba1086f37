import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Exit codes and one-line errors")
struct ExitCodeTests {
    /// A folder with a key, a model and its sealed copy.
    static func prepared() async throws -> CLI {
        let cli = CLI()
        cli.write("m.bin", CLI.randomData(2 << 20 + 9))
        try await cli.run("key", "generate", "--name", "k")
        try await cli.run("key", "generate", "--name", "other")
        try await cli.run("encrypt", "m.bin", "--key", "k.modelkey")
        return cli
    }

    static func expectOneLine(_ result: CLI.Result, _ status: Int32, containing text: String? = nil) {
        #expect(result.status == status, "stderr: \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "expected one line, got: \(result.stderr)")
        if let text { #expect(result.stderr.contains(text), "\(result.stderr)") }
    }

    @Test("64: usage errors")
    func usage() async throws {
        let cli = try await Self.prepared()
        defer { cli.cleanUp() }
        #expect(try await cli.run("encrypt", "m.bin").status == 64)
        #expect(try await cli.run("encrypt", "m.bin", "--key", "k.modelkey", "--passphrase-env", "X").status == 64)
        #expect(try await cli.run("decrypt", "m.bin.coffer", "--key", "k.modelkey", "--stdout", "-o", "x").status == 64)
        #expect(try await cli.run("frobnicate").status == 64)
        Self.expectOneLine(try await cli.run("encrypt", "m.bin", "--passphrase-env", "UNSET_VARIABLE_XYZ"), 64, containing: "not set")
    }

    @Test("65: wrong key, wrong kind of key, damaged file, not a container")
    func badData() async throws {
        let cli = try await Self.prepared()
        defer { cli.cleanUp() }
        Self.expectOneLine(try await cli.run("decrypt", "m.bin.coffer", "--key", "other.modelkey", "-o", "x"), 65, containing: "sealed with model key")
        cli.writeSecret("p", Data("pw".utf8))
        Self.expectOneLine(try await cli.run("decrypt", "m.bin.coffer", "--passphrase-file", "p", "-o", "x", "--format", "coffer"), 65, containing: "needs a model key")
        var sealed = cli.read("m.bin.coffer")!
        sealed[300] ^= 4
        cli.write("damaged.coffer", sealed)
        Self.expectOneLine(try await cli.run("decrypt", "damaged.coffer", "--key", "k.modelkey", "-o", "x"), 65, containing: "authentication failed")
        cli.write("truncated.coffer", sealed.prefix(sealed.count - 5))
        Self.expectOneLine(try await cli.run("decrypt", "truncated.coffer", "--key", "k.modelkey", "-o", "x"), 65, containing: "truncated")
        cli.write("junk.coffer", Data("just some text".utf8))
        Self.expectOneLine(try await cli.run("decrypt", "junk.coffer", "--key", "k.modelkey", "-o", "x", "--format", "coffer"), 65, containing: "not a Coffer container")
        #expect(!cli.listing().contains("x"))
        #expect(!cli.listing().contains { $0.contains("coffer-tmp") })
    }

    @Test("66: missing input, missing or broken key file")
    func noInput() async throws {
        let cli = try await Self.prepared()
        defer { cli.cleanUp() }
        Self.expectOneLine(try await cli.run("encrypt", "missing.bin", "--key", "k.modelkey"), 66, containing: "missing.bin")
        Self.expectOneLine(try await cli.run("decrypt", "missing.coffer", "--key", "k.modelkey"), 66)
        Self.expectOneLine(try await cli.run("encrypt", "m.bin", "--key", "missing.modelkey", "-o", "y"), 66)
        cli.writeSecret("bad.modelkey", Data("{\"key\": \"c2VjcmV0LXNlY3JldA==\"}".utf8))
        let broken = try await cli.run("encrypt", "m.bin", "--key", "bad.modelkey", "-o", "y")
        Self.expectOneLine(broken, 66, containing: ".modelkey")
        #expect(!broken.stderr.contains("c2VjcmV0"))
        Self.expectOneLine(try await cli.run("inspect", "missing"), 66)
        #expect(mkfifo(cli.path("pipe"), 0o600) == 0)
        Self.expectOneLine(try await cli.run("encrypt", "pipe", "--key", "k.modelkey"), 66, containing: "not a regular file or a folder")
        #expect(!cli.listing().contains("pipe.coffer"))
    }

    @Test("73: output exists (without --force) or cannot be created")
    func cannotCreate() async throws {
        let cli = try await Self.prepared()
        defer { cli.cleanUp() }
        let before = cli.read("m.bin.coffer")
        Self.expectOneLine(try await cli.run("encrypt", "m.bin", "--key", "k.modelkey"), 73, containing: "--force")
        #expect(cli.read("m.bin.coffer") == before)
        #expect(try await cli.run("encrypt", "m.bin", "--key", "k.modelkey", "--force").status == 0)
        #expect(cli.read("m.bin.coffer") != before)
        Self.expectOneLine(try await cli.run("decrypt", "m.bin.coffer", "--key", "k.modelkey"), 73)
        Self.expectOneLine(try await cli.run("encrypt", "m.bin", "--key", "k.modelkey", "-o", "no/such/folder/out"), 73)
        Self.expectOneLine(try await cli.run("key", "generate", "--name", "k"), 73)
    }

    @Test("key files are created 0600 and never printed")
    func keyFile() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let result = try await cli.run("key", "generate", "--name", "Secret", "--json")
        #expect(result.status == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: cli.path("Secret.modelkey"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let json = try JSONSerialization.jsonObject(with: cli.read("Secret.modelkey")!) as! [String: String]
        #expect(!result.stdout.contains(json["key"]!))
        let printed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: String]
        #expect(printed["id"] == json["id"] && printed["name"] == "Secret")
    }
}
