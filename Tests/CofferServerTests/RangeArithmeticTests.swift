import CofferFormat
import Foundation
import Testing

@testable import CofferServer

/// Range headers with hostile numbers: the parser as a unit against a model in 128-bit arithmetic,
/// and the blob routes over real HTTP on both ports, where a trap would take the server down.
@Suite("Range arithmetic")
struct RangeArithmeticTests {
    /// What RFC 9110 asks, worked out in 128-bit integers where nothing here can overflow.
    @available(macOS 15.0, iOS 18.0, *)
    static func model(_ header: String, size: Int64) -> ByteRangeRequest {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        func number(_ text: Substring) -> Int128? {
            guard !text.isEmpty, text.count <= 30, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int128(text)
        }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        let size = Int128(size)
        func range(_ lower: Int128, _ upper: Int128) -> ByteRangeRequest { .range(Int64(lower)..<Int64(upper)) }
        switch (number(first), number(last)) {
        case (let a?, nil) where last.isEmpty: return a < size ? range(a, size) : .unsatisfiable
        case (let a?, let b?): return b < a ? .whole : a >= size ? .unsatisfiable : range(a, min(b + 1, size))
        case (nil, let n?) where first.isEmpty: return n == 0 || size == 0 ? .unsatisfiable : range(max(0, size - n), size)
        default: return .whole
        }
    }

    /// Numbers that break naive arithmetic, as text, for a blob of `size` bytes.
    static func extremes(size: Int64) -> [String] {
        // Wrapping where the test itself would overflow (size + 1 at Int64.max is Int64.min: one more extreme).
        let numbers: [Int64] = [0, 1, -1, Int64.max, Int64.min, Int64.max - 1, size &- 1, size, size &+ 1, size / 2]
        return numbers.map(String.init) + [
            "", " ", "99999999999999999999", "000000000000000000000000000001", "9223372036854775808", "+5", "0x10", "1e3", "5 ",
        ]
    }

    /// Headers over `extremes` in every shape, with spacing and several-range variants, plus `random` random ones.
    static func headers(size: Int64, random: Int) -> [String] {
        let values = extremes(size: size)
        var headers: [String] = [
            "bytes=", "bytes=-", "bytes=--", "bytes= 0-9 ", "bytes=0 - 9", "bytes=0-9223372036854775807",
            "bytes=-9223372036854775807", "bytes=-9223372036854775808", "bytes=9223372036854775807-",
            "bytes=9223372036854775807-9223372036854775807", "bytes=0-" + String(repeating: "9", count: 400),
            "bytes=" + String(repeating: "9", count: 400) + "-", "bytes=-" + String(repeating: "9", count: 400),
            "bytes=0-1,2-3", "items=0-9", "bytes=1-0",
        ]
        for a in values {
            headers.append("bytes=\(a)-")
            headers.append("bytes=-\(a)")
            for b in values { headers.append("bytes=\(a)-\(b)") }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<random {
            let a = Int64.random(in: -2...(size < .max - 2 ? size + 2 : .max), using: &generator)
            let b = Int64.random(in: .min ... .max, using: &generator)
            headers.append(["bytes=\(a)-\(b)", "bytes=\(b)-\(a)", "bytes=-\(b.magnitude)", "bytes=\(a)-\(a &+ 3)"].randomElement()!)
        }
        return headers
    }

    @Test("the parser agrees with 128-bit arithmetic on extreme and random values, and never traps",
          arguments: [Int64(0), 1, 10, 4096, Int64.max - 1, Int64.max])
    func parser(size: Int64) {
        for header in Self.headers(size: size, random: 2000) {
            let parsed = ByteRangeRequest(header: header, size: size)
            if #available(macOS 15.0, iOS 18.0, *), header.count < 60 || !header.contains("999999999999999999999") {
                #expect(parsed == Self.model(header, size: size), "\(header) of \(size)")
            }
            if case .range(let range) = parsed {
                #expect(range.lowerBound >= 0 && range.lowerBound < range.upperBound && range.upperBound <= size, "\(header)")
            }
        }
        // Positions beyond the model's 30 digits saturate: past the end, or the whole blob.
        let many = String(repeating: "9", count: 400)
        #expect(ByteRangeRequest(header: "bytes=0-\(many)", size: size) == (size > 0 ? .range(0..<size) : .unsatisfiable))
        #expect(ByteRangeRequest(header: "bytes=\(many)-", size: size) == .unsatisfiable)
        #expect(ByteRangeRequest(header: "bytes=-\(many)", size: size) == (size > 0 ? .range(0..<size) : .unsatisfiable))
    }

    @Test("positions are digits only and saturate at Int64.max")
    func positions() {
        #expect(ByteRangeRequest.position("0") == 0)
        #expect(ByteRangeRequest.position("9223372036854775807") == .max)
        #expect(ByteRangeRequest.position("9223372036854775808") == .max)
        #expect(ByteRangeRequest.position(Substring(String(repeating: "7", count: 1000))) == .max)
        for bad in ["", " 1", "1 ", "+1", "-1", "0x1", "1e3", "١"] { #expect(ByteRangeRequest.position(Substring(bad)) == nil, "\(bad)") }
    }

    /// One request on its own connection (closed by the server after the answer): status, headers, body.
    struct Exchange {
        let status: Int
        let headers: [String: String]
        let body: [UInt8]
    }

    static func exchange(port: Int, _ method: String, _ path: String, range: String, extra: String = "") async throws -> Exchange {
        let connection = try await RawConnection.connect(port: port)
        defer { Task { await connection.close() } }
        try await connection.send("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: \(range)\r\n\(extra)Connection: close\r\n\r\n")
        _ = try await connection.wait { _ in false }
        let bytes = connection.receivedBytes
        let end = try #require(bytes.indices.first { bytes[$0...].starts(with: Array("\r\n\r\n".utf8)) }, "no answer to \(range)")
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = try #require(Int(lines[0].split(separator: " ")[1]))
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Exchange(status: status, headers: headers, body: Array(bytes[(end + 4)...]))
    }

    @Test("the blob routes answer every hostile Range with 200, 206 or 416, on GET and HEAD, and stay up")
    func overHTTP() async throws {
        let server = try await TestServer.start { $0.devicePort = 0 }
        defer { Task { try? await server.stop() } }
        let port = try #require(server.base.port)
        let devicePort = try #require(server.app.storage[DeviceListener.Key.self]?.port)
        let flowers = try await Flowers.make(server)
        let address = try await flowers.upload("range arithmetic")
        let path = "/v1/blobs/\(address)"
        let blob = try await HTTP(base: server.base).call("GET", path).body
        let size = Int64(blob.count)

        for header in Self.headers(size: size, random: 40) {
            let expected = ByteRangeRequest(header: header, size: size)
            for method in ["GET", "HEAD"] {
                let answer = try await Self.exchange(port: port, method, path, range: header)
                let context = Comment(rawValue: "\(method) \(header.prefix(80))")
                switch expected {
                case .whole:
                    #expect(answer.status == 200, context)
                    #expect(answer.headers["content-length"] == "\(size)", context)
                    #expect(answer.headers["content-range"] == nil, context)
                    if method == "GET" { #expect(answer.body == Array(blob), context) }
                case .range(let range):
                    #expect(answer.status == 206, context)
                    #expect(answer.headers["content-range"] == "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)", context)
                    #expect(answer.headers["content-length"] == "\(range.count)", context)
                    if method == "GET" { #expect(answer.body == Array(blob[Int(range.lowerBound)..<Int(range.upperBound)]), context) }
                case .unsatisfiable:
                    #expect(answer.status == 416, context)
                    #expect(answer.headers["content-range"] == "bytes */\(size)", context)
                    // Never kept by a shared cache under the blob's URL.
                    #expect(answer.headers["cache-control"] == "no-store", context)
                    #expect(answer.headers["etag"] == nil, context)
                }
                if expected != .unsatisfiable {
                    #expect(answer.headers["cache-control"]?.contains("immutable") == true, context)
                }
                if method == "HEAD" { #expect(answer.body.isEmpty, context) }
            }
        }

        // The device port serves manifests only: blob paths are a clean 404 (no body after a HEAD),
        // on a connection that stays usable, whatever the Range.
        for header in ["bytes=0-9223372036854775807", "bytes=-9223372036854775808", "bytes=9223372036854775807-"] {
            let connection = try await RawConnection.connect(port: devicePort)
            let request = { (method: String) in "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: \(header)\r\n\r\n" }
            try await connection.send(request("HEAD") + request("GET") + request("HEAD"))
            let (text, closed) = try await connection.wait { RawConnection.statuses($0).count == 3 && $0.hasSuffix("\r\n\r\n") }
            #expect(RawConnection.statuses(text) == [404, 404, 404], "\(text.prefix(300))")
            #expect(!closed, "the device port keeps the connection")
            // A HEAD answer has no body: the next answer starts right after its head.
            #expect(text.components(separatedBy: "\r\n\r\nHTTP/1.1 404").count == 2, "\(text.prefix(600))")
            await connection.close()
        }

        // Still up on both ports: the whole blob, and a manifest.
        #expect(try await HTTP(base: server.base).call("GET", path).body == blob)
        let authorization = "Basic " + Data("\(flowers.app.id):\(flowers.app.credential)".utf8).base64EncodedString()
        let manifest = try await Self.exchange(
            port: devicePort, "GET", "/v1/device/collections/FlowerModels/manifest?deviceID=d", range: "bytes=0-1",
            extra: "Authorization: \(authorization)\r\n")
        #expect([200, 404].contains(manifest.status), "the device port still answers (\(manifest.status))")
    }
}
