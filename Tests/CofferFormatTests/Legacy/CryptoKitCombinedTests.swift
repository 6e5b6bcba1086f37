import Crypto
import Foundation
import Testing

@testable import CofferFormat

/// `mlmodelencoder` files: AES-256-GCM combined (nonce | ciphertext | tag), key = first 32 passphrase bytes.
@Suite struct CryptoKitCombinedTests {
    private let passphrase = Array("a passphrase that is longer than thirty-two bytes".utf8)

    @Test func fileSealedBySwiftCryptoOpens() throws {
        let plaintext = Array("weights and biases".utf8) + (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let key = SymmetricKey(data: passphrase.prefix(32))
        let combined = try #require(try AES.GCM.seal(plaintext, using: key).combined)
        let opened = try openFile(Array(combined), passphrase: passphrase)
        #expect(opened.bytes == plaintext)
        #expect(opened.length == UInt64(plaintext.count))

        var middle = [UInt8](repeating: 0, count: 33)
        try middle.withUnsafeMutableBytes { try opened.read(into: $0, at: 101) }
        #expect(middle == Array(plaintext[101..<134]))
    }

    @Test func ourSealOpensAndOnlyTheFirst32BytesMatter() throws {
        let sealed = try CryptoKitCombined.seal([1, 2, 3], passphrase: passphrase)
        #expect(sealed.count == 12 + 3 + 16)
        #expect(try openFile(sealed, passphrase: passphrase).bytes == [1, 2, 3])
        #expect(try openFile(sealed, passphrase: Array(passphrase.prefix(32)) + Array("other tail".utf8)).bytes == [1, 2, 3])
        #expect(try openFile(CryptoKitCombined.seal([], passphrase: passphrase), passphrase: passphrase).bytes == [])
    }

    @Test func wrongPassphraseIsAnAuthenticationFailure() throws {
        let sealed = try CryptoKitCombined.seal(Array("model".utf8), passphrase: passphrase)
        var wrong = passphrase
        wrong[31] ^= 1
        #expect(throws: ContainerError.authenticationFailure) { try openFile(sealed, passphrase: wrong) }
    }

    @Test func passphraseLengthsCryptoKitCouldNotUseAreRefused() throws {
        #expect(throws: ContainerError.self) { try CryptoKitCombined.seal([1], passphrase: Array("short".utf8)) }
        let sealed = try CryptoKitCombined.seal([1], passphrase: passphrase)
        let expected = "this passphrase cannot have made an mlmodelencoder file: CryptoKit needs 16, 24 or at least 32 bytes"
        // The same words whatever the length, which is never told (it is close to the secret).
        for length in [1, 5, 15, 17, 23, 25, 31] {
            let message = reason { try openFile(sealed, passphrase: Array(passphrase.prefix(length))) }
            #expect(message == expected, "length \(length)")
            #expect(reason { try CryptoKitCombined.seal([1], passphrase: Array(passphrase.prefix(length))) } == expected)
        }
    }

    @Test(arguments: [16, 24])
    func sixteenAndTwentyFourBytePassphrasesAreAES128And192Keys(length: Int) throws {
        let short = Array(passphrase.prefix(length))
        let sealed = try AES.GCM.seal([5, 6, 7], using: SymmetricKey(data: short)).combined!
        #expect(try openFile(Array(sealed), passphrase: short).bytes == [5, 6, 7])
        #expect(throws: ContainerError.authenticationFailure) { try openFile(Array(sealed), passphrase: Array(passphrase.prefix(32))) }
    }

    @Test func tooShortFilesAreMalformed() throws {
        for length in [0, 1, 12, 27] {
            #expect(reason { try openFile([UInt8](repeating: 0, count: length), passphrase: passphrase) }?.contains("too short") == true)
        }
    }

    @Test func sizeLimitIsCheckedBeforeReading() throws {
        let sealed = try CryptoKitCombined.seal([UInt8](repeating: 9, count: 100), passphrase: passphrase)
        let message = reason { try openFile(sealed, passphrase: passphrase, maxSize: 127) }
        #expect(message?.contains("127-byte limit") == true)
        #expect(try openFile(sealed, passphrase: passphrase, maxSize: 128).length == 100)
        #expect(CryptoKitCombined.defaultMaxSize == 2 * 1024 * 1024 * 1024)
    }

    @Test func everyFlippedBitIsRefused() throws {
        let sealed = try CryptoKitCombined.seal(Array("tiny model".utf8), passphrase: passphrase)
        for bit in 0..<(sealed.count * 8) {
            var damaged = sealed
            damaged[bit / 8] ^= 1 << (bit % 8)
            #expect(throws: ContainerError.authenticationFailure, "bit \(bit)") { try openFile(damaged, passphrase: passphrase) }
        }
        for length in 28..<sealed.count {
            #expect(throws: ContainerError.authenticationFailure) { try openFile(Array(sealed.prefix(length)), passphrase: passphrase) }
        }
    }
}

/// Writes `contents` to a temporary file and opens it.
private func openFile(_ contents: [UInt8], passphrase: [UInt8], maxSize: Int = CryptoKitCombined.defaultMaxSize)
    throws -> CryptoKitCombined.Plaintext
{
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ckcombined-\(UUID().uuidString)")
    try Data(contents).write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    return try CryptoKitCombined.open(path: url.path, passphrase: passphrase, maxSize: maxSize)
}

/// The reason of a `.malformedLegacy` thrown by `body`, or nil.
private func reason<T>(_ body: () throws -> T) -> String? {
    do {
        _ = try body()
    } catch ContainerError.malformedLegacy(let reason) {
        return reason
    } catch {}
    return nil
}
