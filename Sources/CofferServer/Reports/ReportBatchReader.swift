import CofferFormat
import Foundation

/// Reads the body of `POST /v1/device/reports` — `{"events": [{…}, …]}` — over its bytes, without
/// Codable: the generic decoder was a quarter of the route's time. It takes strict JSON (RFC 8259:
/// UTF-8, no trailing commas, no comments, escapes checked, no lone surrogates), at most
/// ``ReportBatch/maximumEvents`` events and nesting ``maximumDepth`` deep, refuses a key given
/// twice, and skips keys it does not know (a later SDK may send more). Every failure is a
/// ``ReportFieldError`` saying where.
struct ReportBatchReader {
    static let maximumDepth = 16

    /// The body, read in place (its array's storage, for the reader's lifetime).
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// The unescaped bytes of strings that had escapes, one after another: a batch's bytes are
    /// the body followed by these (``ReportText`` ranges past the body's end point here).
    private var unescaped: [UInt8] = []

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The events as sent, before ``ReportBatch/reports(now:appID:)`` checks their fields.
    static func batch(in body: [UInt8]) throws(ReportFieldError) -> ReportBatch {
        let (events, unescaped) = try body.withUnsafeBufferPointer { (all) throws(ReportFieldError) -> ([ReportBatch.Event], [UInt8]) in
            var reader = ReportBatchReader(all)
            let events = try reader.batch()
            return (events, reader.unescaped)
        }
        return ReportBatch(bytes: unescaped.isEmpty ? body : body + unescaped, events: events)
    }

    private mutating func batch() throws(ReportFieldError) -> [ReportBatch.Event] {
        var events: [ReportBatch.Event]?
        try object { reader, key throws(ReportFieldError) in
            guard key.is("events") else { return try reader.skipValue(depth: 1) }
            guard events == nil else { throw ReportFieldError("the body gives events twice") }
            events = try reader.eventList()
        }
        skipSpace()
        guard index == bytes.count else { throw ReportFieldError("the body goes on after its JSON object") }
        guard let events else { throw ReportFieldError("the body has no events") }
        return events
    }

    private mutating func eventList() throws(ReportFieldError) -> [ReportBatch.Event] {
        try expect(UInt8(ascii: "["), "events must be an array")
        var events: [ReportBatch.Event] = []
        skipSpace()
        if peek() == UInt8(ascii: "]") { index += 1; return events }
        while true {
            guard events.count < ReportBatch.maximumEvents else {
                throw ReportFieldError("a report batch holds 1 to \(ReportBatch.maximumEvents) events")
            }
            do throws(ReportFieldError) {
                events.append(try event())
            } catch {
                throw ReportFieldError("event \(events.count): \(error.reason)")
            }
            skipSpace()
            guard let next = take() else { throw ReportFieldError("the events array is cut short") }
            if next == UInt8(ascii: "]") { return events }
            guard next == UInt8(ascii: ",") else { throw ReportFieldError("expected , or ] between events") }
        }
    }

    private mutating func event() throws(ReportFieldError) -> ReportBatch.Event {
        var id, deviceID, collection, deployment, model, sha256, outcome, reason, at: ReportText?
        var sequence: Int64?
        var reasonIsNull = false
        /// Stores a string field, refusing one given twice.
        func set(_ field: inout ReportText?, _ name: StaticString, _ reader: inout ReportBatchReader) throws(ReportFieldError) {
            guard field == nil else { throw ReportFieldError("\(name) is given twice") }
            field = try reader.text(name.description)
        }
        try object { reader, key throws(ReportFieldError) in
            // One length test and at most one comparison a key (ten keys an event), instead of
            // trying each name in turn.
            switch key.field {
            case .id: try set(&id, "id", &reader)
            case .deviceID: try set(&deviceID, "deviceID", &reader)
            case .collection: try set(&collection, "collection", &reader)
            case .deployment: try set(&deployment, "deployment", &reader)
            case .model: try set(&model, "model", &reader)
            case .sha256: try set(&sha256, "sha256", &reader)
            case .outcome: try set(&outcome, "outcome", &reader)
            case .at: try set(&at, "at", &reader)
            case .sequence:
                guard sequence == nil else { throw ReportFieldError("sequence is given twice") }
                sequence = try reader.integer()
            case .reason:
                guard reason == nil, !reasonIsNull else { throw ReportFieldError("reason is given twice") }
                if reader.literal("null") { reasonIsNull = true } else { reason = try reader.text("reason") }
            case nil:
                try reader.skipValue(depth: 3)
            }
        }
        func required(_ value: ReportText?, _ name: String) throws(ReportFieldError) -> ReportText {
            guard let value else { throw ReportFieldError("\(name) is missing") }
            return value
        }
        guard let sequence else { throw ReportFieldError("sequence is missing") }
        return ReportBatch.Event(id: try required(id, "id"), deviceID: try required(deviceID, "deviceID"),
                                 collection: try required(collection, "collection"), sequence: sequence,
                                 deployment: try required(deployment, "deployment"), model: try required(model, "model"),
                                 sha256: try required(sha256, "sha256"), outcome: try required(outcome, "outcome"), reason: reason,
                                 at: try required(at, "at"))
    }

    /// The members of an event the reader keeps.
    private enum EventField {
        case id, deviceID, collection, sequence, deployment, model, sha256, outcome, reason, at

        /// The member's name in the body.
        var name: StaticString {
            switch self {
            case .id: "id"
            case .deviceID: "deviceID"
            case .collection: "collection"
            case .sequence: "sequence"
            case .deployment: "deployment"
            case .model: "model"
            case .sha256: "sha256"
            case .outcome: "outcome"
            case .reason: "reason"
            case .at: "at"
            }
        }
    }

    /// A member's name, unescaped, compared with the names the reader knows without making a String
    /// of it (a batch has ten keys an event): the bytes between its quotes in the body, or for a
    /// key with escapes (rare) its unescaped bytes.
    private struct Key {
        let plain: UnsafeBufferPointer<UInt8>
        let escaped: [UInt8]?

        func `is`(_ name: StaticString) -> Bool {
            guard let escaped else { return Self.equal(plain, name) }
            return escaped.withUnsafeBufferPointer { Self.equal($0, name) }
        }

        /// The event field this key names, or nil for a key the reader does not know.
        var field: EventField? {
            guard let escaped else { return Self.field(plain) }
            return escaped.withUnsafeBufferPointer { Self.field($0) }
        }

        /// Picks the one name of `given`'s length (and, where two share it, first byte), then
        /// compares the whole key with it.
        private static func field(_ given: UnsafeBufferPointer<UInt8>) -> EventField? {
            let candidate: EventField
            switch given.count {
            case 2: candidate = given[0] == UInt8(ascii: "i") ? .id : .at
            case 5: candidate = .model
            case 6: candidate = given[0] == UInt8(ascii: "s") ? .sha256 : .reason
            case 7: candidate = .outcome
            case 8: candidate = given[0] == UInt8(ascii: "d") ? .deviceID : .sequence
            case 10: candidate = given[2] == UInt8(ascii: "l") ? .collection : .deployment
            default: return nil
            }
            return equal(given, candidate.name) ? candidate : nil
        }

        private static func equal(_ given: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
            guard given.count == name.utf8CodeUnitCount else { return false }
            return name.withUTF8Buffer { expected in given.isEmpty || memcmp(given.baseAddress!, expected.baseAddress!, given.count) == 0 }
        }
    }

    /// Reads `{ "key": value, … }`, handing each key to `member`, which reads its value.
    private mutating func object(_ member: (inout ReportBatchReader, Key) throws(ReportFieldError) -> Void) throws(ReportFieldError) {
        try expect(UInt8(ascii: "{"), "expected a JSON object")
        skipSpace()
        if peek() == UInt8(ascii: "}") { index += 1; return }
        while true {
            skipSpace()
            let key = try key()
            skipSpace()
            try expect(UInt8(ascii: ":"), "expected : after a key")
            skipSpace()
            try member(&self, key)
            skipSpace()
            guard let next = take() else { throw ReportFieldError("an object is cut short") }
            if next == UInt8(ascii: "}") { return }
            guard next == UInt8(ascii: ",") else { throw ReportFieldError("expected , or } in an object") }
        }
    }

    /// A key: the bytes between its quotes when it has no escape (the usual case, nothing copied),
    /// else its unescaped, checked text.
    private mutating func key() throws(ReportFieldError) -> Key {
        guard take() == UInt8(ascii: "\"") else { throw ReportFieldError("a key must be a string") }
        let start = index
        if let high = scanPlain(), high < 0x80 {
            index += 1
            return Key(plain: UnsafeBufferPointer(rebasing: bytes[start..<index - 1]), escaped: nil)
        }
        index = start
        return Key(plain: UnsafeBufferPointer(start: nil, count: 0), escaped: try stringBytes("a key"))
    }

    /// Moves to the first quote, backslash or control byte of a string's text (the opening quote
    /// read). When it is the closing quote, so the text between has no escape, returns the text's
    /// bytes ORed together (below 0x80 when they are all ASCII); else nil. One pass over the bytes
    /// in place, without a bounds check per byte (every string of a batch goes through here).
    private mutating func scanPlain() -> UInt8? {
        var at = index, high: UInt8 = 0
        // Eight bytes at a time while none of them is a quote, a backslash or a control byte
        // (the usual string is 12 to 64 plain bytes), then byte by byte.
        var word: UInt64 = 0
        while at + 8 <= bytes.count {
            let next = UnsafeRawPointer(bytes.baseAddress! + at).loadUnaligned(as: UInt64.self)
            guard !Self.stopsScan(next) else { break }
            word |= next
            at += 8
        }
        for shift in stride(from: 0, to: 64, by: 8) { high |= UInt8(truncatingIfNeeded: word >> UInt64(shift)) }
        while at < bytes.count {
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            high |= byte
            at += 1
        }
        index = at
        return index < bytes.count && bytes[index] == UInt8(ascii: "\"") ? high : nil
    }

    /// Whether any of the eight bytes of `word` is a quote, a backslash or below 0x20 (the usual
    /// bit tricks: a byte equal to b makes `x ^ b` zero, and `(x - 0x01…) & ~x & 0x80…` is nonzero
    /// exactly when some byte of x is zero; `(x - 0x20…) & ~x & 0x80…` when some byte is below 0x20).
    private static func stopsScan(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ x: UInt64) -> Bool { (x &- ones) & ~x & highs != 0 }
        return hasZero(word ^ (ones &* 0x22)) || hasZero(word ^ (ones &* 0x5C)) || (word &- ones &* 0x20) & ~word & highs != 0
    }

    /// A JSON string, unescaped and checked as UTF-8.
    private mutating func text(_ what: @autoclosure () -> String) throws(ReportFieldError) -> ReportText {
        guard take() == UInt8(ascii: "\"") else { throw ReportFieldError("\(what()) must be a string") }
        // The usual string has no escape: one scan to its end; ASCII (the usual text) needs no UTF-8 check.
        let start = index
        if let high = scanPlain() {
            defer { index += 1 }
            if high < 0x80 { return ReportText(range: start..<index) }
            guard String(validating: bytes[start..<index], as: UTF8.self) != nil else { throw ReportFieldError("\(what()) is not UTF-8") }
            return ReportText(range: start..<index)
        }
        index = start
        let text = try stringBytes(what())
        let at = bytes.count + unescaped.count
        unescaped.append(contentsOf: text)
        return ReportText(range: at..<at + text.count)
    }

    /// The unescaped, checked bytes of a string with escapes, its opening quote read.
    private mutating func stringBytes(_ what: @autoclosure () -> String) throws(ReportFieldError) -> [UInt8] {
        var out: [UInt8] = []
        while true {
            guard let byte = take() else { throw ReportFieldError("a string is cut short") }
            switch byte {
            case UInt8(ascii: "\""):
                guard String(validating: out, as: UTF8.self) != nil else { throw ReportFieldError("\(what()) is not UTF-8") }
                return out
            case UInt8(ascii: "\\"):
                guard let escape = take() else { throw ReportFieldError("a string is cut short") }
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"): out.append(contentsOf: try unicodeEscape())
                default: throw ReportFieldError("\(what()) has an unknown escape")
                }
            case 0..<0x20:
                throw ReportFieldError("\(what()) has a raw control character")
            default:
                out.append(byte)
            }
        }
    }

    /// The UTF-8 bytes of `\uXXXX` (the `\u` read), with a surrogate pair's second half.
    private mutating func unicodeEscape() throws(ReportFieldError) -> [UInt8] {
        var scalar = try hex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard take() == UInt8(ascii: "\\"), take() == UInt8(ascii: "u") else { throw ReportFieldError("a lone surrogate in a string") }
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw ReportFieldError("a lone surrogate in a string") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw ReportFieldError("a lone surrogate in a string")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw ReportFieldError("an escape that is not a character") }
        return Array(String(Character(unicode)).utf8)
    }

    private mutating func hex4() throws(ReportFieldError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = take(), let digit = Hex.value(of: byte) else { throw ReportFieldError("a \\u escape needs 4 hex digits") }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// A JSON number that is a whole number within Int64 (no fraction, no exponent).
    private mutating func integer() throws(ReportFieldError) -> Int64 {
        let negative = peek() == UInt8(ascii: "-")
        if negative { index += 1 }
        let start = index
        var value: Int64 = 0
        while let byte = peek(), (0x30...0x39).contains(byte) {
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(Int64(byte - 0x30))
            guard !overflowTimes, !overflowSum else { throw ReportFieldError("sequence must be a whole number that fits 64 bits") }
            value = sum
            index += 1
        }
        guard index > start, !(bytes[start] == UInt8(ascii: "0") && index - start > 1) else {
            throw ReportFieldError("sequence must be a whole number")
        }
        if let next = peek(), next == UInt8(ascii: ".") || next | 0x20 == UInt8(ascii: "e") {
            throw ReportFieldError("sequence must be a whole number")
        }
        return negative ? -value : value
    }

    /// Skips any JSON value, nested at most ``maximumDepth`` deep.
    private mutating func skipValue(depth: Int) throws(ReportFieldError) {
        guard depth <= Self.maximumDepth else { throw ReportFieldError("the body is nested too deep") }
        skipSpace()
        switch peek() {
        case UInt8(ascii: "\"")?: _ = try text("a value")
        case UInt8(ascii: "{")?: try object { reader, _ throws(ReportFieldError) in try reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "[")?:
            index += 1
            skipSpace()
            if peek() == UInt8(ascii: "]") { index += 1; return }
            while true {
                try skipValue(depth: depth + 1)
                skipSpace()
                guard let next = take() else { throw ReportFieldError("an array is cut short") }
                if next == UInt8(ascii: "]") { return }
                guard next == UInt8(ascii: ",") else { throw ReportFieldError("expected , or ] in an array") }
            }
        default:
            if literal("true") || literal("false") || literal("null") { return }
            try skipNumber()
        }
    }

    /// Skips a JSON number (any: fractions and exponents included).
    private mutating func skipNumber() throws(ReportFieldError) {
        if peek() == UInt8(ascii: "-") { index += 1 }
        func digits(_ reader: inout ReportBatchReader) -> Int {
            let start = reader.index
            while let byte = reader.peek(), (0x30...0x39).contains(byte) { reader.index += 1 }
            return reader.index - start
        }
        let whole = index
        guard digits(&self) > 0, !(bytes[whole] == UInt8(ascii: "0") && index - whole > 1) else { throw ReportFieldError("expected a JSON value") }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw ReportFieldError("a number is cut short") }
        }
        if let byte = peek(), byte | 0x20 == UInt8(ascii: "e") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw ReportFieldError("a number is cut short") }
        }
    }

    /// Takes `word` if it comes next.
    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
              word.withUTF8Buffer({ memcmp(bytes.baseAddress! + index, $0.baseAddress!, count) == 0 }) else { return false }
        index += count
        return true
    }

    private mutating func expect(_ byte: UInt8, _ message: String) throws(ReportFieldError) {
        skipSpace()
        guard take() == byte else { throw ReportFieldError(message) }
    }

    private mutating func skipSpace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func take() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }
}
