import Foundation
import Testing
@testable import CofferS3

/// The signer's pieces: dates, URI encoding, header folding, credentials that never show their secret.
@Suite struct SigV4PartsTests {
    @Test(arguments: [
        (0.0, "19700101T000000Z"),
        (-1.0, "19691231T235959Z"),
        (1_440_938_160.0, "20150830T123600Z"),
        (1_709_251_199.9, "20240229T235959Z"),
        (951_782_400.0, "20000229T000000Z"),
        (4_102_444_800.0, "21000101T000000Z"),
        (1e300, "99991231T235959Z"),
        (-1e300, "00000101T000000Z"),
    ])
    func formatsDates(_ seconds: Double, _ expected: String) {
        let date = SigV4Date(Date(timeIntervalSince1970: seconds))
        #expect(date.timestamp == expected)
        #expect(date.day == String(expected.prefix(8)))
    }

    @Test func encodesLikeS3() {
        #expect(SigV4Encoding.encode("test$file.text", keepSlash: true) == "test%24file.text")
        #expect(SigV4Encoding.encode("a b/c+d", keepSlash: true) == "a%20b/c%2Bd")
        #expect(SigV4Encoding.encode("a b/c+d", keepSlash: false) == "a%20b%2Fc%2Bd")
        #expect(SigV4Encoding.encode("~-._AZaz09", keepSlash: false) == "~-._AZaz09")
        #expect(SigV4Encoding.encode("é%*", keepSlash: false) == "%C3%A9%25%2A")
    }

    @Test func sortsTheQueryByEncodedNameThenValue() {
        #expect(SigV4Encoding.canonicalQuery([("b", "2"), ("a", "z"), ("a", "y"), ("A", "1"), ("uploads", "")]) == "A=1&a=y&a=z&b=2&uploads=")
        #expect(SigV4Encoding.canonicalQuery([("prefix", "a/b c"), ("list-type", "2")]) == "list-type=2&prefix=a%2Fb%20c")
    }

    @Test func foldsHeaderWhitespace() {
        let (block, signed) = SigV4Signer.canonicalHeaders([("X-B", "  a \t  b  "), ("x-a", "1"), ("X-A", "2"), ("Host", "h")])
        #expect(block == "host:h\nx-a:1,2\nx-b:a b\n")
        #expect(signed == "host;x-a;x-b")
    }

    @Test func credentialsNeverShowTheSecretOrToken() {
        let credentials = S3Credentials(accessKeyID: "AKID", secretAccessKey: "SECRET-VALUE", sessionToken: "TOKEN-VALUE")
        var dumped = ""
        dump(credentials, to: &dumped)
        let signer = SigV4Signer(credentials: credentials, region: "us-east-1")
        var dumpedSigner = ""
        dump(signer, to: &dumpedSigner)
        for text in [credentials.description, credentials.debugDescription, "\(credentials)", String(reflecting: credentials), dumped, dumpedSigner, "\(signer)"] {
            #expect(text.contains("AKID"))
            #expect(!text.contains("SECRET-VALUE"))
            #expect(!text.contains("TOKEN-VALUE"))
        }
    }
}
