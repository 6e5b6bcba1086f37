import BlockingTestSupport
import Foundation
import Testing

@testable import CofferServer

@Suite("Device attributes from a query string", .ownThread)
struct QueryStringTests {
    static let names = ["deviceID", "deviceClass", "osName", "osVersion", "appVersion", "language", "region", "arch",
                        "memoryGiB", "custom.tier", "custom.x", "device%49D", "DeviceID", "memory", "custom.", "bogus", ""]
    static let values = ["d-1", "", "tablet", "phone", "Tablet", "iOS", "17.4", "3.2", "en", "US", "arm64", "8", "-0", "lots",
                         "1e3", "inf", "%0A", "a%zz", "caf%C3%A9", "a+b", "%E2%80%AE", String(repeating: "x", count: 201),
                         String(repeating: "y", count: 200)]

    /// What the full way gives: attributes, or the error's reason.
    static func full(_ query: String) -> Result<DeviceAttributes, TargetingError> {
        Result { () throws(TargetingError) in try DeviceAttributes(query: try DeviceQuery.parse(query)) }
    }

    static func oneCall(_ query: String) -> Result<DeviceAttributes, TargetingError> {
        Result { () throws(TargetingError) in try DeviceAttributes(queryString: query) }
    }

    @Test("the one-pass reading gives what the full reading gives, for 50 000 queries usual and strange")
    func sameAnswers() {
        var generator = SystemRandomNumberGenerator()
        var plain = 0
        for round in 0..<50_000 {
            var pairs: [String] = []
            // Half the queries are the usual kind: known names, valid values, deviceID first.
            if round.isMultiple(of: 2) {
                pairs.append("deviceID=d-\(round)")
                for name in Self.names[1...8].shuffled(using: &generator).prefix(Int.random(in: 0...8, using: &generator)) {
                    let value = ["deviceClass": "tablet", "memoryGiB": "8", "osVersion": "17.4"][name] ?? "v\(round % 7)"
                    pairs.append("\(name)=\(value)")
                }
            }
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                let name = Self.names.randomElement(using: &generator)!
                let value = Self.values.randomElement(using: &generator)!
                pairs.append(Int.random(in: 0..<10, using: &generator) == 0 ? name : "\(name)=\(value)")
            }
            let query = pairs.shuffled(using: &generator).joined(separator: Int.random(in: 0..<20, using: &generator) == 0 ? "&&" : "&")
            let expected = Self.full(query), got = Self.oneCall(query)
            if let onePass = DeviceAttributes.plain(query) {
                plain += 1
                #expect((try? expected.get()) == onePass, "\(query)")
            }
            switch (expected, got) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(query)")
            case (.failure(let a), .failure(let b)): #expect(a.reason == b.reason, "\(query)")
            default: Issue.record("\(query): \(expected) vs \(got)")
            }
        }
        #expect(plain > 5_000, "enough queries take the one pass")
    }
}
