import Foundation
import Testing

@Suite("Interruptions, --force and hostile names")
struct RobustnessTests {
    @Test("an interrupted folder restore leaves nothing behind")
    func interruptedFolderRestore() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let fm = FileManager.default
        for folder in 0..<20 {
            try fm.createDirectory(atPath: cli.path("big/d\(folder)"), withIntermediateDirectories: true)
            let contents = CLI.randomData(64 << 10)
            for file in 0..<100 { #expect(fm.createFile(atPath: cli.path("big/d\(folder)/f\(file)"), contents: contents)) }
        }
        try await cli.run("key", "generate", "--name", "k")
        #expect(try await cli.run("encrypt", "big", "--key", "k.modelkey").status == 0)
        try fm.removeItem(atPath: cli.path("big"))
        for delay in [0.05, 0.2, 0.4] {
            let result = try await cli.run(["decrypt", "big.coffer", "--key", "k.modelkey", "-o", "out"], interruptAfter: delay)
            if result.status == 0 {
                try fm.removeItem(atPath: cli.path("out"))
            } else {
                // 130 once the CLI handles interruptions; a Ctrl-C before it set that up (its
                // first milliseconds) ends it by the signal, before it has written anything.
                #expect(result.status == 130 || result.signal == SIGINT, "\(result.stderr)")
            }
            #expect(cli.listing() == ["big.coffer", "k.modelkey"], "after \(delay) s: \(cli.listing())")
        }
    }

    @Test("--force replaces a file only with a file and a folder only with a folder")
    func forceKeepsKinds() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let fm = FileManager.default
        try fm.createDirectory(atPath: cli.path("victim/inside"), withIntermediateDirectories: true)
        cli.write("victim/inside/precious", Data("keep me".utf8))
        let key = try await cli.run("key", "generate", "--name", "k", "-o", "victim", "--force")
        #expect(key.status == 73)
        #expect(key.stderr.contains("is a folder"))
        #expect(cli.read("victim/inside/precious") == Data("keep me".utf8))

        try fm.createDirectory(atPath: cli.path("tree/sub"), withIntermediateDirectories: true)
        cli.write("tree/sub/a", Data("a".utf8))
        try await cli.run("key", "generate", "--name", "k")
        try await cli.run("encrypt", "tree", "--key", "k.modelkey")
        cli.write("plain", Data("a file".utf8))
        #expect(try await cli.run("decrypt", "tree.coffer", "--key", "k.modelkey", "-o", "plain", "--force").status == 73)
        #expect(cli.read("plain") == Data("a file".utf8))
        // Folder over folder works, and leaves no hidden leftovers.
        let again = try await cli.run("decrypt", "tree.coffer", "--key", "k.modelkey", "-o", "victim", "--force")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(cli.read("victim/sub/a") == Data("a".utf8))
        #expect(!cli.listing().contains { $0.hasPrefix(".") })
    }

    @Test("a closed pipe is an I/O error (74), not a crash by SIGPIPE")
    func closedPipe() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        cli.write("m.bin", CLI.randomData(8 << 20))
        try await cli.run("key", "generate", "--name", "k")
        try await cli.run("encrypt", "m.bin", "--key", "k.modelkey")
        let statusFile = cli.path("status")
        try await cli.run(["-c", "('\(CLI.binary.path)' decrypt m.bin.coffer --key k.modelkey --stdout; echo $? > '\(statusFile)') | head -c 10 > /dev/null"],
                          binary: URL(fileURLWithPath: "/bin/sh"))
        let status = String(decoding: cli.read("status") ?? Data(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(status == "74")
    }

    @Test("names with control characters are escaped by inspect")
    func escapedNames() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let name = "evil\u{1B}]0;owned\u{07}\r.bin"
        cli.write(name, Data("x".utf8))
        try await cli.run("key", "generate", "--name", "k")
        #expect(try await cli.run("encrypt", name, "--key", "k.modelkey", "-o", "e.coffer").status == 0)
        let text = try await cli.run("inspect", "e.coffer")
        #expect(!text.stdout.contains("\u{1B}") && !text.stdout.contains("\r"))
        #expect(text.stdout.contains("evil\\u{1b}]0;owned\\u{7}\\u{d}.bin"))
    }

    @Test("restored modes are the owner's only, less what the umask takes; an out-of-range chunk size is a usage error")
    func umaskAndUsage() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try FileManager.default.createDirectory(atPath: cli.path("t"), withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: cli.path("t/x"), contents: Data(), attributes: [.posixPermissions: 0o777]))
        try await cli.run("key", "generate", "--name", "k")
        try await cli.run("encrypt", "t", "--key", "k.modelkey")
        // A stored 0o777 keeps the owner's bits (0o700); the umask then takes the owner's x too.
        let restored = try await cli.run(["-c", "umask 137; '\(CLI.binary.path)' decrypt t.coffer --key k.modelkey -o r"],
                                         binary: URL(fileURLWithPath: "/bin/sh"))
        #expect(restored.status == 0, "\(restored.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: cli.path("r/x"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try await cli.run("encrypt", "t", "--key", "k.modelkey", "--chunk-size-exponent", "25", "-o", "z").status == 64)
    }
}
