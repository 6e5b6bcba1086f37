@testable import CofferServer
import Testing
import Vapor

/// The Content-Type check both ports run before reading a body (``NonJSONBodies``): its shortcut for
/// `application/json` against Vapor's full parse of the header.
@Suite("Non-JSON bodies")
struct NonJSONBodiesTests {
    static let values = [
        "application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "application/json\t; x=1",
        "application/jsonx", "application/json5", "application/json+x", "Application/JSON", " application/json", "application/js",
        "application/x-www-form-urlencoded", "application/x-www-form-urlencoded; charset=utf-8", "text/plain", "text/plain; charset=utf-8",
        "TEXT/PLAIN", "text/plainx", "application/octet-stream", "", ";", "application/json, text/plain", "text/plain, application/json",
        "application/json-seq", "application/json text/plain", "application/json;text/plain", "Text/Plain; charset=utf-8",
        "APPLICATION/X-WWW-FORM-URLENCODED",
    ]
    /// Values that must be refused with a body, whatever Vapor's parser makes of the others.
    static let forms: Set = [
        "application/x-www-form-urlencoded", "application/x-www-form-urlencoded; charset=utf-8", "text/plain",
        "text/plain; charset=utf-8", "TEXT/PLAIN", "Text/Plain; charset=utf-8", "APPLICATION/X-WWW-FORM-URLENCODED",
    ]

    @Test("the shortcut says yes to application/json alone or before parameters, and to nothing else")
    func shortcut() {
        let yes: Set = ["application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "application/json\t; x=1",
                         "application/json text/plain", "application/json;text/plain"]
        for value in Self.values { #expect(NonJSONBodies.isPlainJSON(value) == yes.contains(value), "\(value)") }
    }

    @Test("with and without the shortcut, every value gets the same answer: 415 for a form or plain text with a body, else none")
    func sameAnswers() {
        for value in Self.values {
            let headers: HTTPHeaders = ["Content-Type": value, "Content-Length": "2"]
            let full = headers.contentType.map { type in
                NonJSONBodies.refused.contains { $0.type.lowercased() == type.type.lowercased() && $0.subType.lowercased() == type.subType.lowercased() }
            } ?? false
            #expect((NonJSONBodies.refusal(headers) != nil) == full, "\(value)")
            if Self.forms.contains(value) { #expect(full, "\(value)") }
            if NonJSONBodies.isPlainJSON(value) { #expect(!full, "\(value)") }
        }
        #expect(NonJSONBodies.refusal(["Content-Type": "text/plain", "Content-Length": "2"])?.status == .unsupportedMediaType)
        #expect(NonJSONBodies.refusal(["Content-Type": "text/plain", "Content-Length": "0"]) == nil)
    }

    @Test("two Content-Type headers: the first decides, for the shortcut and for Vapor's decoder alike")
    func twoHeaders() {
        let jsonFirst = HTTPHeaders([("Content-Type", "application/json"), ("Content-Type", "text/plain"), ("Content-Length", "2")])
        #expect(NonJSONBodies.refusal(jsonFirst) == nil)
        #expect(jsonFirst.contentType == .json)
        let textFirst = HTTPHeaders([("Content-Type", "text/plain"), ("Content-Type", "application/json"), ("Content-Length", "2")])
        #expect(NonJSONBodies.refusal(textFirst)?.status == .unsupportedMediaType)
    }
}
