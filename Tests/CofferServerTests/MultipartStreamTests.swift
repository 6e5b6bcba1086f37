@testable import CofferServer
import NIOCore
import Testing

/// ``MultipartStream`` over bodies cut into pieces at every size: the same parts and contents
/// whatever the cuts, and a clear refusal of malformed and cut-short bodies.
@Suite("Multipart stream")
struct MultipartStreamTests {
    static let body = Array("--xyz\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\ntoken\r\n--xyz\r\nContent-Disposition: form-data; name=\"model\"; filename=\"m.coffer\"\r\nContent-Type: application/octet-stream\r\n\r\nab\r\n--xy\r\ncd\r\n--xyz--\r\nepilogue".utf8)

    /// Every event of `bytes` fed in pieces of `size`, contents merged per part.
    static func parts(_ bytes: [UInt8], pieces size: Int) throws -> (parts: [(String, String?, String)], complete: Bool) {
        var stream = MultipartStream(boundary: "xyz")
        var parts: [(String, String?, String)] = []
        var start = 0
        while start < bytes.count {
            let end = min(start + size, bytes.count)
            for event in try stream.feed(ByteBuffer(bytes: bytes[start..<end])) {
                switch event {
                case .part(let name, let filename): parts.append((name, filename, ""))
                case .data(let buffer): parts[parts.count - 1].2 += String(buffer: buffer)
                case .end: break
                }
            }
            start = end
        }
        return (parts, stream.isComplete)
    }

    @Test("the same parts whatever the pieces, a look-alike boundary inside a file kept as content")
    func pieces() throws {
        for size in 1...Self.body.count {
            let (parts, complete) = try Self.parts(Self.body, pieces: size)
            #expect(complete, "pieces of \(size)")
            #expect(parts.count == 2)
            #expect(parts.first?.0 == "csrf" && parts.first?.2 == "token", "pieces of \(size)")
            #expect(parts.last?.0 == "model" && parts.last?.1 == "m.coffer" && parts.last?.2 == "ab\r\n--xy\r\ncd", "pieces of \(size)")
        }
    }

    @Test("cut-short bodies are never complete; malformed ones are refused with a reason, never a crash")
    func malformed() throws {
        for cut in 0..<(Self.body.count - 10) {
            let complete = (try? Self.parts(Array(Self.body.prefix(cut)), pieces: 7))?.complete ?? false
            #expect(!complete, "cut at \(cut)")
        }
        #expect(throws: MultipartStream.Malformed.self) { try Self.parts(Array("hello".utf8) + Self.body, pieces: 100) }
        #expect(throws: MultipartStream.Malformed.self) { try Self.parts(Array("--xyz\r\nX-No: 1\r\n\r\nbody\r\n--xyz--".utf8), pieces: 100) }
        #expect(throws: MultipartStream.Malformed.self) { try Self.parts(Array("--xyz\r\n".utf8) + [UInt8](repeating: 0x41, count: 9000), pieces: 1000) }
        // Any byte, header names included, is only data to this reader.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var bytes = Self.body
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            _ = try? Self.parts(bytes, pieces: Int.random(in: 1...64, using: &generator))
        }
    }
}
