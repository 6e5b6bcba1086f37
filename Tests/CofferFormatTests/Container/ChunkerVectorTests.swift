import BlockingTestSupport
import Crypto
import Foundation
import Testing

@testable import CofferFormat

/// Runs Swift's version 2 writer against `Vectors/chunker/` (made by the Python reference): the
/// same plaintext must be cut into the same chunks with the same IDs and the same sealed bytes, or
/// models sealed by one writer would share nothing with models sealed by the other.
@Suite("Version 2 writer vectors", .ownThread)
struct ChunkerVectorTests {
    static let folder = Bundle.module.url(forResource: "Vectors", withExtension: nil)!.appendingPathComponent("chunker")

    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
    }

    struct Vector: Decodable {
        struct Part: Decodable {
            var hex: String?
            var zeros: Int?
            var sha256Stream: String?
            var length: Int?
        }
        var key: String
        var payloadKind: Int
        var plaintext: [Part]
        var plaintextLength: Int
        var plaintextSHA256: String
        var segments: [[UInt64]]?
        var chunkLengths: [UInt32]
        var chunkIDs: [String]
        var sealedChunksSHA256: String
    }

    /// The plaintext with the entry boundaries a packed folder would give.
    struct Segmented: PlaintextSource {
        let bytes: BytesSource
        let segmentStarts: [UInt64]
        var length: UInt64 { bytes.length }
        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws { try bytes.read(into: buffer, at: offset) }
    }

    static func bytes(_ part: Vector.Part) throws -> [UInt8] {
        if let hex = part.hex { return try #require(hex.hexBytes) }
        if let zeros = part.zeros { return [UInt8](repeating: 0, count: zeros) }
        let seed = Array(try #require(part.sha256Stream).utf8), length = try #require(part.length)
        var out: [UInt8] = []
        var counter: UInt64 = 0
        while out.count < length {
            out.append(contentsOf: SHA256.hash(data: seed + withUnsafeBytes(of: counter.bigEndian) { Array($0) }))
            counter += 1
        }
        return Array(out.prefix(length))
    }

    @Test("the vector folder is present")
    func present() { #expect(Self.names.count >= 9) }

    @Test("Swift cuts and seals as the reference does", arguments: ChunkerVectorTests.names)
    func vector(_ name: String) throws {
        let vector = try JSONDecoder().decode(Vector.self, from: Data(contentsOf: Self.folder.appendingPathComponent(name)))
        let plaintext = try vector.plaintext.flatMap(Self.bytes)
        #expect(plaintext.count == vector.plaintextLength)
        #expect(SHA256.hash(data: plaintext).map { String(format: "%02x", $0) }.joined() == vector.plaintextSHA256)
        let source = Segmented(bytes: BytesSource(plaintext), segmentStarts: (vector.segments ?? []).map { $0[0] })
        let key = try ModelKey(id: "vector", name: "vector", created: Date(timeIntervalSince1970: 0),
                               key: SymmetricKey(data: try #require(vector.key.hexBytes)))
        let gear = ContentChunker.gear(inputKeyMaterial: key.key)
        #expect(try ContentChunker.lengths(of: source, segmentStarts: source.segmentStarts, gear: gear) == vector.chunkLengths, "\(name)")
        let (header, _) = try SealedModel.draftHeader(
            kind: vector.payloadKind == 2 ? .directory : .file, name: "v", source: source, key: .modelKey(key), options: .init())
        let sink = MemorySink(length: Int(header.sealedLength))
        let sealed = try SealedModel.seal(source, kind: header.payloadKind, name: "v", using: .modelKey(key), to: sink)
        let table = try #require(sealed.chunkTable)
        #expect(table.entries.map { $0.id.bytes.map { String(format: "%02x", $0) }.joined() } == vector.chunkIDs, "\(name)")
        let chunks = sink.bytes.dropFirst(sealed.encodedLength)
        #expect(SHA256.hash(data: Array(chunks)).map { String(format: "%02x", $0) }.joined() == vector.sealedChunksSHA256, "\(name)")
    }
}

private extension String {
    var hexBytes: [UInt8]? {
        guard utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var index = startIndex
        while index < endIndex {
            let next = self.index(index, offsetBy: 2)
            guard let byte = UInt8(self[index..<next], radix: 16) else { return nil }
            out.append(byte)
            index = next
        }
        return out
    }
}
