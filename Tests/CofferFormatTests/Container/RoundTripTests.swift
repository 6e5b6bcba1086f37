import BlockingTestSupport
import Foundation
import Testing
@testable import CofferFormat

@Suite("Sealing and opening round trips", .ownThread)
struct RoundTripTests {
    @Test("bytes survive sealing and opening", arguments: [
        0, 1, 100, Fixtures.chunk - 1, Fixtures.chunk, Fixtures.chunk + 1, 3 * Fixtures.chunk, 3 * Fixtures.chunk + 17,
    ])
    func roundTrip(size: Int) throws {
        let plaintext = Fixtures.bytes(size)
        let sealed = try Fixtures.seal(plaintext)
        let header = try ContainerHeader(parsing: Array(sealed.prefix(try Fixtures.headerLength(sealed))))
        #expect(UInt64(sealed.count) == header.sealedLength)
        #expect(header.chunkCount == UInt64(max(1, (size + Fixtures.chunk - 1) / Fixtures.chunk)))
        #expect(try SealedModel.open(sealed, using: .modelKey(Fixtures.key)) == plaintext)
    }

    @Test("the sealed bytes do not contain the plaintext")
    func ciphertextHidesPlaintext() throws {
        let marker = Array("THIS-IS-A-SECRET-MODEL-WEIGHT-BLOCK".utf8)
        let plaintext = Array(repeating: marker, count: 100).flatMap { $0 }
        let sealed = try Fixtures.seal(plaintext)
        #expect(!sealed.indices.dropLast(marker.count).contains { Array(sealed[$0..<$0 + marker.count]) == marker })
    }

    @Test("sealing twice gives different containers (fresh salt)")
    func freshSalt() throws {
        let plaintext = Fixtures.bytes(1000)
        #expect(try Fixtures.seal(plaintext) != Fixtures.seal(plaintext))
    }

    @Test("passphrase containers open with the passphrase and record scrypt parameters")
    func passphrase() throws {
        let plaintext = Fixtures.bytes(70_000)
        let sealed = try Fixtures.seal(plaintext, key: .passphrase(Array("correct horse".utf8)))
        let reader = try SealedModel.Reader(bytes: sealed, using: .passphrase(Array("correct horse".utf8)))
        #expect(reader.header.keyID == nil)
        guard case .passphrase(let parameters) = reader.header.keyDerivation else {
            Issue.record("expected passphrase derivation")
            return
        }
        #expect(parameters.logN == 10 && parameters.r == 8 && parameters.p == 1)
        #expect(try reader.read(range: 0..<reader.plaintextLength) == plaintext)
    }

    @Test("the default chunk size is 1 MiB and one worker gives the same plaintext as many")
    func workersAgree() throws {
        let plaintext = Fixtures.bytes(3 << 20 + 5)
        var options = SealedModel.Options()
        #expect(options.chunkSizeExponent == 20)
        options.workers = 1
        let sealed = try SealedModel.seal(plaintext, name: "a", using: .modelKey(Fixtures.key), options: options)
        let reader = try SealedModel.Reader(bytes: sealed, using: .modelKey(Fixtures.key))
        var ordered: [UInt8] = []
        try reader.decryptInOrder(workers: 3) { ordered.append(contentsOf: $0) }
        #expect(ordered == plaintext)
    }

    @Test("files round trip through the file API, atomically and without replacing")
    func fileAPI() throws {
        let folder = Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("model.onnx").path
        let sealedPath = folder.appendingPathComponent("model.onnx.coffer").path
        let output = folder.appendingPathComponent("restored.onnx").path
        let plaintext = Fixtures.bytes(200_000)
        #expect(FileManager.default.createFile(atPath: input, contents: Data(plaintext)))

        let header = try SealedModel.seal(contentsOf: input, to: sealedPath, using: .modelKey(Fixtures.key), options: Fixtures.smallChunks)
        #expect(header.originalName == "model.onnx")
        #expect(header.payloadKind == .file)
        #expect(throws: IOFailure.self) {
            try SealedModel.seal(contentsOf: input, to: sealedPath, using: .modelKey(Fixtures.key))
        }
        try SealedModel.open(contentsOf: sealedPath, to: output, using: .modelKey(Fixtures.key))
        #expect(FileManager.default.contents(atPath: output) == Data(plaintext))
        let mode = try FileManager.default.attributesOfItem(atPath: output)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // Nothing but the three files: no temporary leftovers.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["model.onnx", "model.onnx.coffer", "restored.onnx"])
    }

    @Test("a damaged container leaves no output and no temporary file")
    func damagedLeavesNothing() throws {
        let folder = Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var sealed = try Fixtures.seal(Fixtures.bytes(3 * Fixtures.chunk))
        sealed[sealed.count - Fixtures.chunk - 100] ^= 0x40  // inside the last full chunk but one
        let sealedPath = folder.appendingPathComponent("m.coffer").path
        #expect(FileManager.default.createFile(atPath: sealedPath, contents: Data(sealed)))
        #expect(throws: ContainerError.authenticationFailure) {
            try SealedModel.open(contentsOf: sealedPath, to: folder.appendingPathComponent("m").path, using: .modelKey(Fixtures.key))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["m.coffer"])
    }
}
