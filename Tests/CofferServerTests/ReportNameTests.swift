import Foundation
import Testing

@testable import CofferServer

/// How the report route matches what an event names with what the server knows.
@Suite("Report names and digests")
struct ReportNameTests {
    @Test("names are matched byte for byte: a canonically equivalent spelling (KELVIN SIGN for K) is another name")
    func lookAlikeNames() throws {
        let digest = try #require(ModelDigest(hex: String(repeating: "0f", count: 32)))
        #expect(ModelDigest(hex: String(repeating: "0F", count: 32)) == nil && ModelDigest(hex: "0f") == nil)
        let target = ReportTargets.Target(teamID: UUID(), collection: "KiteModels", models: [.init(name: "Kite", digests: [digest])])
        #expect(target.digests(of: "Kite") == [digest])
        #expect("\u{212A}ite" == "Kite", "Swift's String equality holds them equal")
        #expect(target.digests(of: "\u{212A}ite") == nil)
        let app = AppCredentials.App(id: UUID(), teamID: UUID(), credentialHash: "", previousCredentialHash: nil, revoked: false,
                                     collections: ["KiteModels"], attestation: .none, age: CacheAge())
        #expect(app.isBound(to: "KiteModels"))
        #expect(app.collections.contains("\u{212A}iteModels"), "a Set of Strings finds the look-alike")
        #expect(!app.isBound(to: "\u{212A}iteModels"))
    }

    @Test("hasSameBytes: equal bytes only, for small (inline) and large strings, empty ones, prefixes and look-alikes")
    func sameBytes() {
        let long = String(repeating: "FlowerClassifier-", count: 8)
        let pairs: [(String, String, Bool)] = [
            ("Kite", "Kite", true), ("\u{212A}ite", "Kite", false), ("", "", true), ("", "a", false),
            ("Kite", "Kites", false), ("Kites", "Kite", false), (long, long + "", true), (long, long + "x", false),
            (long, String(long.dropLast()) + "+", false), ("e\u{301}", "\u{e9}", false),
            (String(Substring(long)), long, true),
        ]
        for (a, b, same) in pairs {
            #expect(a.hasSameBytes(as: b) == same, "\(Array(a.utf8)) vs \(Array(b.utf8))")
            #expect(a.hasSameBytes(as: b) == Array(a.utf8).elementsEqual(Array(b.utf8)))
            let order = a.compareBytes(with: b), bytesFirst = Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
            #expect((order < 0) == bytesFirst && (order == 0) == same && (order > 0) == (!bytesFirst && !same), "\(Array(a.utf8)) vs \(Array(b.utf8))")
            #expect(b.compareBytes(with: a).signum() == -order.signum())
        }
    }
}
