import Crypto
import Foundation
import Testing

@testable import CofferServer

@Suite("Secrets")
struct SecretsTests {
    @Test("a stored hash matches its secret only, compared against the stored hex")
    func matches() {
        for _ in 0..<200 {
            let secret = Secrets.make(prefix: "cfa_")
            let stored = Secrets.hash(secret)
            #expect(stored == SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined())
            #expect(Secrets.matches(secret, hash: stored))
            #expect(!Secrets.matches(secret + "x", hash: stored))
            #expect(!Secrets.matches(String(secret.dropLast()), hash: stored))
            // One digit changed anywhere, a hash cut short or too long, another case: no match.
            var digits = Array(stored)
            let index = Int.random(in: 0..<digits.count)
            digits[index] = digits[index] == "0" ? "1" : "0"
            #expect(!Secrets.matches(secret, hash: String(digits)))
            #expect(!Secrets.matches(secret, hash: String(stored.dropLast())))
            #expect(!Secrets.matches(secret, hash: stored + "0"))
            #expect(!Secrets.matches(secret, hash: "") && !Secrets.matches("", hash: stored))
            if stored.contains(where: \.isLetter) { #expect(!Secrets.matches(secret, hash: stored.uppercased())) }
        }
    }
}
