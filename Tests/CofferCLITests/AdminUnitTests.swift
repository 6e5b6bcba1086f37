import Coffer
import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import coffer

@Suite("Admin CLI building blocks")
struct AdminUnitTests {
    @Test("SHA256Digest equals swift-crypto for every padding length and any split into pieces")
    func digest() {
        var generator = SystemRandomNumberGenerator()
        let data = Data((0..<1000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        for length in Array(0...200) + [447, 448, 511, 512, 513, 1000] {
            let message = data.prefix(length)
            let expected = SHA256.hash(data: message).map { String(format: "%02x", $0) }.joined()
            var whole = SHA256Digest()
            message.withUnsafeBytes { whole.update($0) }
            #expect(whole.finalizeHex() == expected, "length \(length)")
            var pieces = SHA256Digest()
            var offset = 0
            while offset < length {
                let count = min(Int.random(in: 1...70, using: &generator), length - offset)
                message.dropFirst(offset).prefix(count).withUnsafeBytes { pieces.update($0) }
                offset += count
            }
            #expect(pieces.finalizeHex() == expected, "length \(length) in pieces")
        }
        let empty = SHA256Digest()
        #expect(empty.finalizeHex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("HTTP statuses map to the documented exit codes")
    func statuses() {
        let cases: [(Int, Int32)] = [(400, 65), (401, 77), (403, 77), (404, 66), (409, 65), (411, 65), (413, 65),
                                     (422, 65), (429, 75), (500, 69), (502, 69), (503, 69), (302, 76)]
        for (http, exit) in cases {
            #expect(ServerFailure.status(forHTTP: http).rawValue == exit, "HTTP \(http)")
        }
    }

    @Test("error answers become one line: reason (HTTP status code)")
    func messages() throws {
        let server = URL(string: "http://127.0.0.1:1")!
        func answer(_ status: Int, _ body: String, headers: [String: String] = [:]) -> HTTPTransport.Answer {
            HTTPTransport.Answer(response: HTTPURLResponse(url: server, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!,
                                 body: Data(body.utf8))
        }
        let limited = ServerFailure.failure(for: answer(429, #"{"error":"rate_limited","reason":"too many key requests"}"#,
                                                        headers: ["Retry-After": "30"]), from: server)
        #expect(limited.status == .tryAgain)
        #expect(limited.message == "too many key requests; try again in 30 seconds (HTTP 429 rate_limited)")
        let hostile = ServerFailure.failure(for: answer(503, #"{"error":"busy","reason":"busy"}"#,
                                                        headers: ["Retry-After": "nan\u{1b}[2J"]), from: server)
        #expect(hostile.message == "busy (HTTP 503 busy)", "a Retry-After that is not seconds is left out")
        let proxy = ServerFailure.failure(for: answer(502, "<html>bad gateway</html>"), from: server)
        #expect(proxy.status == .unavailable)
        #expect(proxy.message.hasSuffix(" (HTTP 502)"))
        #expect(Printable.text("a\u{1b}[2Jb\n") == "a\\u{1b}[2Jb\\u{a}")
    }

    @Test("Retry-After is read as digits only, capped at a day; anything else is no wait at all")
    func retryAfter() {
        let cases: [(String?, TimeInterval?)] = [
            ("30", 30), (" 120\t", 120), ("0", 0), ("86401", 86_400), (String(repeating: "9", count: 40), 86_400),
            (nil, nil), ("", nil), (" ", nil), ("nan", nil), ("-nan", nil), ("inf", nil), ("-5", nil), ("+5", nil),
            ("1e3", nil), ("0x10", nil), ("1.5", nil), ("٣", nil), ("Fri, 27 Nov 2026 10:00:00 GMT", nil),
        ]
        for (header, expected) in cases {
            #expect(RetryAfter.seconds(header) == expected, "\(String(describing: header))")
        }
    }

    @Test("server addresses, request URLs and byte ranges")
    func parsing() throws {
        #expect(try ServerAddress.parse("https://coffer.example.com/").absoluteString == "https://coffer.example.com")
        #expect(try ServerAddress.parse("http://127.0.0.1:8080//").absoluteString == "http://127.0.0.1:8080")
        // Plain http:// to another machine would send the token unencrypted (the tests do not set
        // COFFER_ALLOW_INSECURE_HTTP).
        for bad in ["coffer.example.com", "ftp://x", "http://", "https://x/?a=b", "https://user:pw@x", "http://coffer.example.com"] {
            #expect(throws: AdminFailure.self, "\(bad)") { try ServerAddress.parse(bad) }
        }
        let base = try ServerAddress.parse("https://h/prefix")
        #expect(ServerAddress.url(base, ["v1", "teams", "Bee Hive/2", "audit"], query: [("since", "2026-01-01T00:00:00+02:00")]).absoluteString
                == "https://h/prefix/v1/teams/Bee%20Hive%2F2/audit?since=2026-01-01T00%3A00%3A00%2B02%3A00")
        #expect(ServerAddress.url(base, ["v1", "teams", "..", "apps"]).absoluteString == "https://h/prefix/v1/teams/%2E%2E/apps")
        #expect(ByteRange(argument: "0-99") == ByteRange(argument: "0-99"))
        #expect(ByteRange(argument: "5-")?.header == "bytes=5-")
        #expect(ByteRange(argument: "10-20")?.header == "bytes=10-20")
        for bad in ["", "-5", "9-3", "a-b", "1-2-3", "5"] { #expect(ByteRange(argument: bad) == nil, "\(bad)") }
    }
}
