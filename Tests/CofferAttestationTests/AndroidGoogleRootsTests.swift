import CofferAttestation
import Crypto
import Foundation
import SwiftASN1
import X509
import XCTest

final class AndroidGoogleRootsTests: XCTestCase {
    /// SHA-256 fingerprints recorded in AndroidGoogleRoots.swift, newest RSA issuance first, then the EC root.
    static let fingerprints = [
        "cedb1cb6dc896ae5ec797348bce9286753c2b38ee71ce0fbe34a9a1248800dfc",
        "ab6641178a36e179aa0c1cdddf9a16eb45fa20943e2b8cd7c7c05c26cf8b487a",
        "1ef1a04b8ba58ab94589ac498c8982a783f24ea7307e0159a0c3a73b377d87cc",
        "c1984a3ef45c1e2a918551de10603c86f7051b2249c4891cae3230eabd0c97d5",
        "6d9db4ce6c5c0b293166d08986e05774a8776ceb525d9e4329520de12ba4bcc0",
    ]

    func testEmbeddedRootsParseAndMatchTheirFingerprints() throws {
        let roots = AndroidKeyAttestationVerifier.googleRoots
        XCTAssertEqual(roots.count, 5)
        let fingerprints = try roots.map { root -> String in
            var serializer = DER.Serializer()
            try serializer.serialize(root)
            return SHA256.hash(data: serializer.serializedBytes).map { String(format: "%02x", $0) }.joined()
        }
        XCTAssertEqual(fingerprints, Self.fingerprints)
    }

    func testRSAIssuancesShareOneKeyAndNameAndAreSelfSigned() throws {
        let roots = AndroidKeyAttestationVerifier.googleRoots
        XCTAssertEqual(Set(roots.prefix(4).map(\.publicKey)).count, 1)
        XCTAssertEqual(Set(roots.prefix(4).map(\.subject)).count, 1)
        for root in roots {
            XCTAssertEqual(root.subject, root.issuer)
            XCTAssertTrue(root.publicKey.isValidSignature(root.signature, for: root))
        }
    }
}
