import Crypto
import CryptoExtras
import Foundation
import Testing

@Suite("Legacy formats through the CLI")
struct LegacyFormatTests {
    static let passphrase = "the-old-app-passphrase-of-32-bytes-or-more"

    /// An mlmodelencoder-style file made with swift-crypto directly: nonce | ciphertext | tag, key = first 32 passphrase bytes.
    static func cryptoKitCombined(_ plaintext: Data, passphrase: String) throws -> Data {
        let key = SymmetricKey(data: Array(passphrase.utf8).prefix(32))
        return try AES.GCM.seal(plaintext, using: key).combined!
    }

    /// A key-based RNCryptor v3 file built from its published layout with swift-crypto primitives.
    static func rncryptorKeyBased(_ plaintext: Data, encryptionKey: [UInt8], hmacKey: [UInt8]) throws -> Data {
        let iv = AES._CBC.IV()
        let ciphertext = try AES._CBC.encrypt(plaintext, using: SymmetricKey(data: encryptionKey), iv: iv)
        let body = Data([3, 0]) + Data(iv) + ciphertext
        return body + Data(HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: hmacKey)))
    }

    @Test("RNCryptor v3 written by coffer opens with coffer (auto-detected) and refuses a wrong password")
    func rncryptorRoundTrip() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let plaintext = CLI.randomData(1 << 20 + 333)
        cli.write("m.bin", plaintext)
        cli.writeSecret("pass", Data(Self.passphrase.utf8))
        let sealed = try await cli.run("encrypt", "m.bin", "--format", "rncryptor", "--passphrase-file", "pass")
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(cli.read("m.bin.rncryptor")?.prefix(2) == Data([3, 1]))
        let opened = try await cli.run("decrypt", "m.bin.rncryptor", "--passphrase-file", "pass", "-o", "back.bin")
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(cli.read("back.bin") == plaintext)
        cli.writeSecret("wrong", Data("not it".utf8))
        #expect(try await cli.run("decrypt", "m.bin.rncryptor", "--passphrase-file", "wrong", "-o", "x").status == 65)
        #expect(!cli.listing().contains("x"))
    }

    @Test("key-based RNCryptor v3 files open with --rncryptor-key-file")
    func rncryptorKeyBased() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let encryption = (0..<32).map { UInt8($0) }, hmac = (0..<32).map { UInt8(100 + $0) }
        let plaintext = CLI.randomData(50_000)
        cli.write("model.enc", try Self.rncryptorKeyBased(plaintext, encryptionKey: encryption, hmacKey: hmac))
        let hex = (encryption + hmac).map { String(format: "%02x", $0) }.joined()
        cli.writeSecret("keys.hex", Data((hex + "\n").utf8))
        let result = try await cli.run("decrypt", "model.enc", "--rncryptor-key-file", "keys.hex")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(cli.read("model") == plaintext)
        cli.writeSecret("bad.hex", Data(String(hex.dropLast(2)).utf8))
        #expect(try await cli.run("decrypt", "model.enc", "--rncryptor-key-file", "bad.hex", "-o", "y").status == 64)
    }

    @Test("CryptoKit-combined files of mlmodelencoder open, by detection or --format")
    func cryptoKitCombined() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let plaintext = CLI.randomData(200_000)
        cli.write("Model.mlmodel.enc", try Self.cryptoKitCombined(plaintext, passphrase: Self.passphrase))
        let result = try await cli.run(["decrypt", "Model.mlmodel.enc", "--passphrase-env", "OLD"], environment: ["OLD": Self.passphrase])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(cli.read("Model.mlmodel") == plaintext)
        let stdout = try await cli.run(["decrypt", "Model.mlmodel.enc", "--format", "cryptokit-combined", "--passphrase-env", "OLD", "--stdout"],
                                 environment: ["OLD": Self.passphrase])
        #expect(stdout.stdoutBytes == plaintext)
        var damaged = cli.read("Model.mlmodel.enc")!
        damaged[100] ^= 1
        cli.write("damaged.enc", damaged)
        let refused = try await cli.run(["decrypt", "damaged.enc", "--passphrase-env", "OLD", "-o", "z"], environment: ["OLD": Self.passphrase])
        #expect(refused.status == 65)
        #expect(!cli.listing().contains("z"))
    }

    @Test("migrate re-seals legacy files as Coffer containers without writing plaintext to disk")
    func migrate() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let plaintext = CLI.randomData(3 << 20 + 1)
        cli.write("a.mlmodel.enc", try Self.cryptoKitCombined(plaintext, passphrase: Self.passphrase))
        cli.writeSecret("pass", Data(Self.passphrase.utf8))
        cli.write("b.bin", plaintext)
        try await cli.run("encrypt", "b.bin", "--format", "rncryptor", "--passphrase-file", "pass", "-o", "b.enc")
        try FileManager.default.removeItem(atPath: cli.path("b.bin"))
        try await cli.run("key", "generate", "--name", "new")
        cli.writeSecret("newpass", Data("brand new passphrase".utf8))

        let first = try await cli.run("migrate", "a.mlmodel.enc", "--passphrase-file", "pass", "--key", "new.modelkey")
        #expect(first.status == 0, "\(first.stderr)")
        let second = try await cli.run("migrate", "b.enc", "--passphrase-file", "pass", "--new-passphrase-file", "newpass")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(cli.listing() == ["a.mlmodel.coffer", "a.mlmodel.enc", "b.coffer", "b.enc", "new.modelkey", "newpass", "pass"])

        let inspect = try await cli.run("inspect", "a.mlmodel.coffer")
        #expect(inspect.stdout.contains("a.mlmodel"))
        #expect(try await cli.run("decrypt", "a.mlmodel.coffer", "--key", "new.modelkey", "--stdout").stdoutBytes == plaintext)
        #expect(try await cli.run("decrypt", "b.coffer", "--passphrase-file", "newpass", "--stdout").stdoutBytes == plaintext)
        #expect(try await cli.run("migrate", "a.mlmodel.enc", "--passphrase-file", "newpass", "--key", "new.modelkey", "-o", "c.coffer").status == 65)
        #expect(try await cli.run("migrate", "a.mlmodel.coffer", "--passphrase-file", "pass", "--key", "new.modelkey").status == 64)
    }
}
