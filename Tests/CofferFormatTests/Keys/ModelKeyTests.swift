import Crypto
import Foundation
import Testing
@testable import CofferFormat

@Suite("Model keys")
struct ModelKeyTests {
    @Test("generated keys are 256 bits with a 32-hex-digit random ID")
    func generate() {
        let a = ModelKey.generate(name: "A"), b = ModelKey.generate(name: "B")
        #expect(a.key.bitCount == 256)
        #expect(a.id.count == 32 && a.id.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(a.id != b.id)
        #expect(a.key != b.key)
    }

    @Test(".modelkey files round trip and carry the documented fields")
    func fileRoundTrip() throws {
        let key = ModelKey.generate(name: "FlowerClassifier")
        let data = key.fileRepresentation()
        let json = try JSONSerialization.jsonObject(with: data) as? [String: String]
        #expect(Set(json?.keys ?? [:].keys) == ["format", "id", "name", "created", "key"])
        #expect(json?["format"] == "coffer-modelkey-v1")
        let back = try ModelKey(fileRepresentation: data)
        #expect(back.id == key.id && back.name == key.name && back.key == key.key)
        #expect(abs(back.created.timeIntervalSince(key.created)) < 1)
    }

    @Test("malformed .modelkey files are refused without quoting them")
    func malformed() throws {
        let good = try JSONSerialization.jsonObject(with: ModelKey.generate(name: "x").fileRepresentation()) as! [String: String]
        var shortKey = good; shortKey["key"] = Data(count: 16).base64EncodedString()
        var badFormat = good; badFormat["format"] = "other"
        var badID = good; badID["id"] = "has space"
        for contents in [shortKey, badFormat, badID] {
            let data = try JSONSerialization.data(withJSONObject: contents)
            #expect(throws: ModelKeyError.self) { try ModelKey(fileRepresentation: data) }
        }
        do {
            _ = try ModelKey(fileRepresentation: Data("{\"key\":\"c2VjcmV0\"".utf8))
            Issue.record("accepted broken JSON")
        } catch {
            #expect(!"\(error)".contains("c2VjcmV0"))
        }
        #expect(throws: ModelKeyError.self) { try ModelKey(fileRepresentation: Data(count: 70_000)) }
    }
}
