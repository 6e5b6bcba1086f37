@testable import CofferServer
import BlockingTestSupport
import Foundation
import Testing

/// The report body's byte-level reader against Foundation's JSON decoder: the same events from
/// every valid batch (escapes, Unicode, white space, unknown keys), never an event the decoder would
/// not give from a mutated one, and no crash; and the RFC 3339 reader against Foundation's.
@Suite("Report batch reader", .ownThread)
struct ReportBatchReaderTests {
    /// What Foundation decodes, to compare with.
    struct Mirror: Decodable {
        struct Event: Decodable, Equatable {
            let id, deviceID, collection: String
            let sequence: Int64
            let deployment, model, sha256, outcome: String
            let reason: String?
            let at: String
        }
        let events: [Event]
    }

    /// The events of `body` as ``Mirror`` events.
    static func read(_ body: [UInt8]) throws(ReportFieldError) -> [Mirror.Event] {
        let batch = try ReportBatchReader.batch(in: body)
        return batch.events.map { event in
            Mirror.Event(id: batch.string(event.id), deviceID: batch.string(event.deviceID), collection: batch.string(event.collection),
                         sequence: event.sequence, deployment: batch.string(event.deployment), model: batch.string(event.model),
                         sha256: batch.string(event.sha256), outcome: batch.string(event.outcome), reason: event.reason.map(batch.string),
                         at: batch.string(event.at))
        }
    }

    static let texts = ["plain", "", "quote \" and \\ backslash / slash", "tab\tnew\nline\u{1}", "é ü 中文 😀 \u{202E}rtl", "\u{FEFF}bom", String(repeating: "x", count: 300)]

    static func randomEvent(_ generator: inout SplitMix64) -> [String: Any] {
        func text() -> String { texts.randomElement(using: &generator)! }
        var event: [String: Any] = ["id": text(), "deviceID": text(), "collection": text(), "sequence": Int64.random(in: -5...Int64.max, using: &generator),
                                    "deployment": UUID().uuidString, "model": text(), "sha256": text(), "outcome": text(), "at": text()]
        switch Int.random(in: 0..<3, using: &generator) {
        case 0: event["reason"] = text()
        case 1: event["reason"] = NSNull()
        default: break
        }
        if Bool.random(using: &generator) { event["extra"] = ["nested": [1, 2.5, -3e7, true, NSNull(), ["deep": "x"]]] as [String: Any] }
        return event
    }

    @Test("every valid batch reads as Foundation decodes it")
    func agreesOnValid() throws {
        var generator = SplitMix64(state: 0x5EED)
        for round in 0..<300 {
            let events = (0..<Int.random(in: 0...12, using: &generator)).map { _ in Self.randomEvent(&generator) }
            var body: [String: Any] = ["events": events]
            if Bool.random(using: &generator) { body["unknown"] = [1, "two"] as [Any] }
            let data = try JSONSerialization.data(withJSONObject: body, options: Bool.random(using: &generator) ? [.prettyPrinted] : [])
            let expected = try JSONDecoder().decode(Mirror.self, from: data).events
            let read = try Self.read(Array(data))
            #expect(read == expected, "round \(round)")
        }
    }

    @Test("keys one byte off a field's name (same length, same first byte) are skipped, not read as that field")
    func lookAlikeKeys() throws {
        let names = ["id", "deviceID", "collection", "sequence", "deployment", "model", "sha256", "outcome", "reason", "at"]
        var generator = SplitMix64(state: 0x10_0C_A1)
        for name in names {
            for position in name.utf8.indices.dropFirst() {
                var bytes = Array(name.utf8)
                let at = name.utf8.distance(from: name.utf8.startIndex, to: position)
                bytes[at] = bytes[at] == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
                let lookAlike = String(decoding: bytes, as: UTF8.self)
                var event = Self.randomEvent(&generator)
                event[lookAlike] = name == "sequence" ? "not a number" as Any : 7 as Any
                let data = try JSONSerialization.data(withJSONObject: ["events": [event]])
                let expected = try JSONDecoder().decode(Mirror.self, from: data).events
                #expect(try Self.read(Array(data)) == expected, "\(lookAlike)")
            }
        }
    }

    @Test("a mutated batch is refused or reads as Foundation decodes it; nothing crashes")
    func mutations() throws {
        var generator = SplitMix64(state: 0xBAD5EED)
        let seed = Array(try JSONSerialization.data(withJSONObject: ["events": (0..<3).map { _ in Self.randomEvent(&generator) }]))
        let tokens = Array("{}[]\",:0123456789-+.eE\\u/ntfr \u{0}\u{7F}".utf8) + [0xC3, 0xA9, 0xED, 0xA0, 0x80, 0xFF]
        var accepted = 0
        for _ in 0..<5000 {
            var body = seed
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let at = Int.random(in: 0..<body.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: body[at] = tokens.randomElement(using: &generator)!
                case 1: body.remove(at: at)
                default: body.insert(tokens.randomElement(using: &generator)!, at: at)
                }
            }
            guard let read = try? Self.read(body) else { continue }
            accepted += 1
            let decoded = try? JSONDecoder().decode(Mirror.self, from: Data(body)).events
            #expect(decoded == read, "\(String(decoding: body, as: UTF8.self))")
        }
        #expect(accepted > 0, "some mutations leave a valid batch")
    }

    @Test("refusals name what is wrong: nesting, duplicates, numbers, escapes, surrogates, size")
    func refusals() {
        let event = #"{"id":"a","deviceID":"d","collection":"c","sequence":1,"deployment":"x","model":"m","sha256":"s","outcome":"o","at":"t"}"#
        let cases: [(String, String)] = [
            ("", "expected a JSON object"), ("[]", "expected a JSON object"), (#"{"events":{}}"#, "events must be an array"),
            (#"{"events":[]} x"#, "goes on after"), (#"{}"#, "has no events"), (#"{"events":[],"events":[]}"#, "events twice"),
            (#"{"events":[\#(event),]}"#, "event 1: expected a JSON object"),
            (#"{"events":[\#(event.replacingOccurrences(of: "\"sequence\":1", with: "\"sequence\":1.5"))]}"#, "whole number"),
            (#"{"events":[\#(event.replacingOccurrences(of: "\"sequence\":1", with: "\"sequence\":99999999999999999999"))]}"#, "fits 64 bits"),
            (#"{"events":[\#(event.replacingOccurrences(of: "\"sequence\":1", with: "\"sequence\":01"))]}"#, "whole number"),
            (#"{"events":[\#(event.replacingOccurrences(of: "\"model\":\"m\"", with: "\"model\":\"m\",\"model\":\"n\""))]}"#, "model is given twice"),
            (#"{"events":[\#(event.replacingOccurrences(of: "\"model\":\"m\"", with: "\"model\":\"\\ud800\""))]}"#, "lone surrogate"),
            (#"{"events":[\#(event.replacingOccurrences(of: "\"model\":\"m\"", with: "\"model\":\"\\x\""))]}"#, "unknown escape"),
            (#"{"events":[\#(event.replacingOccurrences(of: ",\"at\":\"t\"", with: ""))]}"#, "event 0: at is missing"),
            (#"{"x":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}", "nested too deep"),
            (#"{"events":["# + Array(repeating: event, count: 101).joined(separator: ",") + "]}", "1 to 100 events"),
        ]
        for (body, reason) in cases {
            #expect(throws: ReportFieldError.self, "\(body.prefix(80))") { _ = try Self.read(Array(body.utf8)) }
            do { _ = try Self.read(Array(body.utf8)) } catch { #expect(error.reason.contains(reason), "\(error.reason) ∌ \(reason)") }
        }
        #expect((try? Self.read(Array("{\"events\":[\(event)]}".utf8)))?.count == 1)
        #expect((try? Self.read(Array("{\"events\":[\(event.replacingOccurrences(of: "\"d\"", with: "\"\u{E9}\\u00e9\\ud83d\\ude00\""))]}".utf8)))?.first?.deviceID == "éé😀")
    }

    @Test("the string scan (eight bytes at a time) stops at a quote, backslash or control byte at every offset, and tells ASCII from UTF-8 in every word")
    func scanAtEveryOffset() throws {
        let before = Array(#"{"events":[{"id":"a","deviceID":"#.utf8)
        let after = Array(#","collection":"c","sequence":1,"deployment":"x","model":"m","sha256":"s","outcome":"o","at":"t"}]}"#.utf8)
        func read(_ text: [UInt8]) throws(ReportFieldError) -> String {
            try Self.read(before + [0x22] + text + [0x22] + after)[0].deviceID
        }
        let x = UInt8(ascii: "x"), backslash = UInt8(ascii: "\\"), quote = UInt8(ascii: "\"")
        for length in 0..<40 {
            let plain = [UInt8](repeating: x, count: length)
            #expect(try read(plain) == String(repeating: "x", count: length))
            for at in 0..<length {
                // An escaped quote and an escaped backslash at `at`.
                var escapedQuote = plain, escapedBackslash = plain, expectedQuote = plain, expectedBackslash = plain
                escapedQuote.replaceSubrange(at..<at + 1, with: [backslash, quote])
                expectedQuote[at] = quote
                escapedBackslash.replaceSubrange(at..<at + 1, with: [backslash, backslash])
                expectedBackslash[at] = backslash
                #expect(try read(escapedQuote) == String(decoding: expectedQuote, as: UTF8.self))
                #expect(try read(escapedBackslash) == String(decoding: expectedBackslash, as: UTF8.self))
                // A raw control byte at `at` is refused, wherever it falls in a word.
                for control: UInt8 in [0x00, 0x0A, 0x1F] {
                    var raw = plain
                    raw[at] = control
                    #expect(throws: ReportFieldError.self, "length \(length) at \(at) byte \(control)") { try read(raw) }
                }
                // A two-byte UTF-8 character at `at` reads as itself; a lone continuation byte is refused.
                var accented = plain
                accented.replaceSubrange(at..<at + 1, with: [0xC3, 0xA9])
                #expect(try read(accented) == String(decoding: accented, as: UTF8.self))
                var lone = plain
                lone[at] = 0xA9
                #expect(throws: ReportFieldError.self, "length \(length) at \(at)") { try read(lone) }
            }
        }
    }

    @Test("RFC 3339 times read as Foundation reads them; impossible dates are refused")
    func times() throws {
        var generator = SplitMix64(state: 0x3339)
        let style = Date.ISO8601FormatStyle()
        for _ in 0..<2000 {
            let date = Date(timeIntervalSince1970: Double(Int64.random(in: 0...253_402_300_799, using: &generator)))
            let text = date.formatted(style)
            #expect(RFC3339.date(text) == date, "\(text)")
            #expect(RFC3339.date(text.lowercased()) == date)
        }
        #expect(RFC3339.date("2026-11-24T09:00:00.250+01:00") == Date(timeIntervalSince1970: 1_795_507_200.25))
        #expect(RFC3339.date("2026-11-24T07:30:00-00:30") == RFC3339.date("2026-11-24T08:00:00Z"))
        for bad in ["2026-02-29T00:00:00Z", "2024-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-24T24:00:00Z", "2026-11-24T08:60:00Z",
                    "2026-11-24T08:00:60Z", "1969-12-31T23:59:59Z", "2026-11-24 08:00:00Z", "2026-11-24T08:00:00", "2026-11-24T08:00:00.Z",
                    "2026-11-24T08:00:00+0100", "2026-11-24T08:00:00+24:00", "+2026-11-24T08:00:00Z", "２026-11-24T08:00:00Z", ""] {
            #expect(RFC3339.date(bad) == nil, "\(bad)")
        }
        #expect(RFC3339.date("2024-02-29T00:00:00Z") != nil)
    }
}
