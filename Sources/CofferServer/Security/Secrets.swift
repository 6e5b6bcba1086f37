import CofferFormat
import Crypto
import Foundation

/// Bearer secrets (API tokens, app credentials): made from 256 random bits, stored only as SHA-256.
enum Secrets {
    /// A new secret with a readable prefix, e.g. `cft_…` for tokens, `cfa_…` for app credentials.
    static func make(prefix: String) -> String {
        prefix + base64URL(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
    }

    /// `data` in unpadded base64url (RFC 4648 §5).
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Whether two byte sequences of one length are equal, in time that does not depend on where
    /// they differ (sequences of different lengths are unequal at once: lengths are not secret).
    static func constantTimeEqual(_ left: some Collection<UInt8>, _ right: some Collection<UInt8>) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(left, right) { difference |= a ^ b }
        return difference == 0
    }

    /// The lowercase hex SHA-256 of a secret: what the database keeps.
    static func hash(_ secret: String) -> String {
        SHA256.hash(data: Data(secret.utf8)).hexString
    }

    /// Compares a presented secret with a stored hash in constant time.
    ///
    /// The digest is compared digit by digit with the stored hex, without writing it out as text
    /// first: app credentials are checked on every manifest request.
    static func matches(_ secret: String, hash stored: String) -> Bool {
        var secret = secret
        let digest = secret.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
        let expected = stored.utf8
        guard expected.count == SHA256.byteCount * 2 else { return false }
        var difference: UInt8 = 0
        var digits = expected.makeIterator()
        for byte in digest {
            let pair = Hex.digitPair(byte)
            difference |= pair.high ^ digits.next()!
            difference |= pair.low ^ digits.next()!
        }
        return difference == 0
    }

    /// Whether two presented secrets (CSRF tokens, say) are equal, in time that does not depend on
    /// where they differ: both are hashed first, so only equal-length digests are compared.
    static func equal(_ first: String, _ second: String) -> Bool {
        constantTimeEqual(Array(SHA256.hash(data: Data(first.utf8))), Array(SHA256.hash(data: Data(second.utf8))))
    }
}
