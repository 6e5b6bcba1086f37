import Foundation
import Testing

@Suite("coffer encrypt / decrypt")
struct EncryptDecryptTests {
    @Test("a file seals and opens bit for bit with a model key, using the default names")
    func fileWithKey() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let plaintext = CLI.randomData(3 << 20 + 77)
        cli.write("model.onnx", plaintext)
        #expect(try await cli.run("key", "generate", "--name", "Demo").status == 0)
        let sealed = try await cli.run("encrypt", "model.onnx", "--key", "Demo.modelkey")
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(cli.read("model.onnx.coffer") != nil)
        try FileManager.default.moveItem(atPath: cli.path("model.onnx"), toPath: cli.path("original.onnx"))
        let opened = try await cli.run("decrypt", "model.onnx.coffer", "--key", "Demo.modelkey")
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(cli.read("model.onnx") == plaintext)
        #expect(cli.listing() == ["Demo.modelkey", "model.onnx", "model.onnx.coffer", "original.onnx"])
    }

    @Test("passphrases come from a file or the environment, and never appear in any output")
    func passphrases() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let secret = "tr0ub4dor&3-sekret-passphrase"
        cli.writeSecret("pass.txt", Data((secret + "\n").utf8))
        cli.write("weights.safetensors", CLI.randomData(100_000))
        let sealed = try await cli.run("encrypt", "weights.safetensors", "--passphrase-file", "pass.txt", "-o", "w.coffer")
        #expect(sealed.status == 0, "\(sealed.stderr)")
        let opened = try await cli.run(["decrypt", "w.coffer", "--passphrase-env", "MY_PASS", "-o", "back"], environment: ["MY_PASS": secret])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(cli.read("back") == cli.read("weights.safetensors"))
        let wrong = try await cli.run(["decrypt", "w.coffer", "--passphrase-env", "MY_PASS", "-o", "x"], environment: ["MY_PASS": "nope"])
        #expect(wrong.status == 65)
        for result in [sealed, opened, wrong] {
            #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret))
        }
    }

    @Test("--stdout writes exactly the plaintext")
    func toStandardOutput() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let plaintext = CLI.randomData(2 << 20 + 5)
        cli.write("m.bin", plaintext)
        try await cli.run("key", "generate", "--name", "k")
        try await cli.run("encrypt", "m.bin", "--key", "k.modelkey")
        let result = try await cli.run("decrypt", "m.bin.coffer", "--key", "k.modelkey", "--stdout")
        #expect(result.status == 0)
        #expect(result.stdoutBytes == plaintext)
    }

    @Test("--stdout of a damaged file writes nothing at all")
    func standardOutputAllOrNothing() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        cli.write("m.bin", CLI.randomData(3 << 20))
        try await cli.run("key", "generate", "--name", "k")
        try await cli.run("encrypt", "m.bin", "--key", "k.modelkey")
        var sealed = cli.read("m.bin.coffer")!
        sealed[sealed.count - (1 << 20) - 100] ^= 1  // the middle of the second-to-last chunk
        cli.write("m.bin.coffer", sealed)
        let result = try await cli.run("decrypt", "m.bin.coffer", "--key", "k.modelkey", "--stdout")
        #expect(result.status == 65)
        #expect(result.stdoutBytes.isEmpty)
    }

    @Test("a model folder seals and restores with its tree, modes and links")
    func folder() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let fm = FileManager.default
        let root = cli.path("Flower.mlmodelc")
        try fm.createDirectory(atPath: root + "/weights", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/empty", withIntermediateDirectories: true)
        #expect(fm.createFile(atPath: root + "/model.mil", contents: Data("program".utf8)))
        #expect(fm.createFile(atPath: root + "/weights/weight.bin", contents: CLI.randomData(1 << 20 + 3)))
        #expect(fm.createFile(atPath: root + "/run.sh", contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755]))
        #expect(fm.createFile(atPath: root + "/.hidden", contents: Data()))
        try fm.createSymbolicLink(atPath: root + "/weights/link.mil", withDestinationPath: "../model.mil")
        try await cli.run("key", "generate", "--name", "k")
        let sealed = try await cli.run("encrypt", "Flower.mlmodelc/", "--key", "k.modelkey")
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(cli.read("Flower.mlmodelc.coffer") != nil)
        let restored = try await cli.run("decrypt", "Flower.mlmodelc.coffer", "--key", "k.modelkey", "-o", "Restored.mlmodelc")
        #expect(restored.status == 0, "\(restored.stderr)")
        let back = cli.path("Restored.mlmodelc")
        #expect(fm.contents(atPath: back + "/weights/weight.bin") == fm.contents(atPath: root + "/weights/weight.bin"))
        #expect(fm.contents(atPath: back + "/model.mil") == Data("program".utf8))
        #expect(try fm.destinationOfSymbolicLink(atPath: back + "/weights/link.mil") == "../model.mil")
        // Plaintext is the owner's alone: the stored 0o755 keeps its owner bits only; so do the
        // folders and the 0o644 files, whatever the umask lets others have.
        #expect((try fm.attributesOfItem(atPath: back + "/run.sh")[.posixPermissions] as? Int) == 0o700)
        #expect((try fm.attributesOfItem(atPath: back + "/model.mil")[.posixPermissions] as? Int) == 0o600)
        for folder in [back, back + "/weights", back + "/empty"] {
            #expect((try fm.attributesOfItem(atPath: folder)[.posixPermissions] as? Int) == 0o700, "\(folder)")
        }
        #expect(try fm.contentsOfDirectory(atPath: back).sorted() == [".hidden", "empty", "model.mil", "run.sh", "weights"])
        // Sealing the same tree again gives the same plaintext stream: inspect shows the same size.
        let inspectA = try await cli.run("inspect", "Flower.mlmodelc.coffer", "--json")
        try await cli.run("encrypt", "Restored.mlmodelc", "--key", "k.modelkey")
        let inspectB = try await cli.run("inspect", "Restored.mlmodelc.coffer", "--json")
        #expect(inspectA.stdout.replacingOccurrences(of: "Flower", with: "Restored") == inspectB.stdout)
    }

    @Test("an empty folder and an empty file round trip")
    func empties() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try FileManager.default.createDirectory(atPath: cli.path("empty.mlpackage"), withIntermediateDirectories: false)
        cli.write("empty.bin", Data())
        try await cli.run("key", "generate", "--name", "k")
        for name in ["empty.mlpackage", "empty.bin"] {
            #expect(try await cli.run("encrypt", name, "--key", "k.modelkey").status == 0)
            let result = try await cli.run("decrypt", name + ".coffer", "--key", "k.modelkey", "-o", "out-" + name)
            #expect(result.status == 0, "\(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.path("out-empty.mlpackage")).isEmpty)
        #expect(cli.read("out-empty.bin") == Data())
    }

    @Test("an interrupted encrypt leaves either the complete output or nothing")
    func interrupted() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        cli.write("big.bin", Data(count: 256 << 20))
        try await cli.run("key", "generate", "--name", "k")
        // Interrupted once its unfinished output (a hidden file) exists: in the middle of the work.
        let result = try await cli.run(["encrypt", "big.bin", "--key", "k.modelkey"],
                                       interruptWhen: { [cli] in cli.listing().contains { $0.hasPrefix(".") } })
        #expect(result.signal == nil, "it handles the interruption itself")
        if result.status == 0 {
            #expect(cli.listing() == ["big.bin", "big.bin.coffer", "k.modelkey"])
        } else {
            #expect(result.status == 130)
            #expect(cli.listing() == ["big.bin", "k.modelkey"])
        }
    }
}
