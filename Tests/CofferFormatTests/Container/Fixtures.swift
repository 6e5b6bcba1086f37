import Crypto
import Foundation
import Testing
@testable import CofferFormat

/// Small, fast settings and helpers shared by the container tests.
enum Fixtures {
    static let chunk = 1 << 16

    /// Version 1 with 64 KiB chunks: the fixed layout these tests compute offsets from.
    static var smallChunks: SealedModel.Options {
        var options = SealedModel.Options()
        options.formatVersion = 1
        options.chunkSizeExponent = 16
        options.passphraseLogN = 10
        return options
    }

    static let key = ModelKey.generate(name: "test")
    static let otherKey = ModelKey.generate(name: "other")

    static func bytes(_ count: Int, seed: UInt8 = 1) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &* 7 &+ ($0 >> 8)) }
    }

    static func seal(_ plaintext: [UInt8], key: KeyMaterial = .modelKey(Fixtures.key)) throws -> [UInt8] {
        try SealedModel.seal(plaintext, name: "model.bin", using: key, options: smallChunks)
    }

    /// The length of the whole header at the start of `sealed`.
    static func headerLength(_ sealed: [UInt8]) throws -> Int {
        try #require(try ContainerHeader.preamble(from: sealed)).headerLength
    }

    /// Opens fully, returning the error thrown, if any.
    static func openError(_ sealed: [UInt8], key: KeyMaterial = .modelKey(Fixtures.key)) -> Error? {
        do {
            _ = try SealedModel.open(sealed, using: key)
            return nil
        } catch {
            return error
        }
    }

    static func temporaryFolder() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-test-" + UUID().uuidString)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
