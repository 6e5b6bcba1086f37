import BlockingTestSupport
import Foundation
import Testing

extension SealedFields {
    /// Runs the built `sealed-items` example as a user would.
    @Suite struct ExampleApp {
        static let binary: URL = {
            #if os(Linux)
            let folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            #else
            let folder = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }!.bundleURL.deletingLastPathComponent()
            #endif
            return folder.appendingPathComponent("sealed-items")
        }()

        struct Result { let status: Int32; let stdout: String; let stderr: String }

        func run(_ arguments: [String], in dir: TemporaryDirectory, passphrase: String? = nil,
                 newPassphrase: String? = nil, stdin: String = "") async throws -> Result {
            let folder = dir.url
            return try await ProcessSlots.shared.run { try Self.runBlocking(arguments, in: folder, passphrase: passphrase, newPassphrase: newPassphrase, stdin: stdin) }
        }

        private static func runBlocking(_ arguments: [String], in folder: URL, passphrase: String?, newPassphrase: String?,
                                        stdin: String) throws -> Result {
            var environment = ProcessInfo.processInfo.environment
            environment["SEALED_ITEMS_PASSPHRASE"] = passphrase
            environment["SEALED_ITEMS_NEW_PASSPHRASE"] = newPassphrase
            let child = try ChildProcess(executable: Self.binary, arguments: arguments, environment: environment, directory: folder,
                                         input: true, output: .pipe, errorOutput: .pipe)
            child.standardInput?.write(Data(stdin.utf8))
            try child.standardInput?.close()
            let (status, outData, errData) = try child.finish(within: 600)
            return Result(status: status, stdout: String(decoding: outData, as: UTF8.self),
                          stderr: String(decoding: errData, as: UTF8.self))
        }

        @Test func createListSearchChangePassphraseAndRotate() async throws {
            let dir = try TemporaryDirectory()
            let file = URL(fileURLWithPath: dir.path("items.sqlite"))
            #expect(try await run(["create", "Milk", "SKU-1"], in: dir, passphrase: "plum tree").status == 0)
            #expect(try await run(["create", "Bread", "SKU-2"], in: dir, stdin: "plum tree\n").status == 0)
            let listed = try await run(["list"], in: dir, passphrase: "plum tree")
            #expect(listed.status == 0 && listed.stdout.contains("SKU-1  Milk") && listed.stdout.contains("SKU-2  Bread"))
            let found = try await run(["search", "Milk"], in: dir, passphrase: "plum tree")
            #expect(found.stdout.contains("Milk") && !found.stdout.contains("Bread"))

            let before = try Data(contentsOf: file)
            let wrong = try await run(["create", "Eggs", "SKU-3"], in: dir, passphrase: "plum three")
            #expect(wrong.status == 1 && wrong.stderr.contains("wrong passphrase") && !wrong.stderr.contains("plum"))
            #expect(try Data(contentsOf: file) == before)

            #expect(try await run(["change-passphrase"], in: dir, passphrase: "plum tree", newPassphrase: "pear tree").status == 0)
            #expect(try await run(["list"], in: dir, passphrase: "plum tree").status == 1)
            let rotated = try await run(["rotate"], in: dir, passphrase: "pear tree")
            #expect(rotated.status == 0 && rotated.stdout.contains("data key 2 now writes; retired 1"))
            let after = try await run(["list"], in: dir, passphrase: "pear tree")
            #expect(after.stdout == listed.stdout)

            let bytes = try Data(contentsOf: file)
            #expect(!bytes.contains("Milk") && !bytes.contains("SKU-1") && !bytes.contains("Bread"))
            #expect(try await run(["create", "Milk"], in: dir, passphrase: "pear tree").status == 64)
        }
    }
}
