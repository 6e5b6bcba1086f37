import CofferAttestation
import Crypto
import Foundation
import SwiftASN1
import X509
import XCTest

/// Genuine device chains published by Google (Fixtures/Android/README.md), checked with the
/// embedded Google roots at a time they were valid.
final class AndroidRealChainTests: XCTestCase {
    static let digestEDk47k = Array(Data(base64Encoded: "EDk47kU35Z6O55L2VFBPuDRvxrNG0LvEQV/DOfz8jsE=") ?? Data())
    static let digestSystem = Array(Data(base64Encoded: "MBqjywgRNFAcRfFCKrxmwkIk/V3tX9yPF+aXF2/YZqo=") ?? Data())

    static func chain(_ name: String) throws -> [[UInt8]] {
        let url = try XCTUnwrap(Bundle.module.url(forResource: name, withExtension: "pem", subdirectory: "Fixtures/Android"))
        // Base64 bodies between the markers, whatever their line length (one fixture uses 76 columns).
        let text = try String(contentsOf: url, encoding: .utf8)
        let blocks = text.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst()
        return try blocks.map { block in
            let body = try XCTUnwrap(block.components(separatedBy: "-----END CERTIFICATE-----").first)
            return Array(try XCTUnwrap(Data(base64Encoded: body, options: .ignoreUnknownCharacters)))
        }
    }

    static func date(_ iso: String) throws -> Date {
        try XCTUnwrap(ISO8601DateFormatter().date(from: iso))
    }

    /// A TEE policy for `package`; `unlocked` accepts devices with an unlocked bootloader (two of
    /// Google's published chains come from such test devices).
    static func policy(_ package: String, _ digest: [UInt8], unlocked: Bool = false) -> AndroidKeyAttestationPolicy {
        AndroidKeyAttestationPolicy(packageName: package, signingCertificateDigests: [digest], minimumSecurityLevel: .trustedEnvironment,
                                    requiresVerifiedBoot: !unlocked)
    }

    func testRemotelyProvisionedChainUnderKeyAttestationCA1Verifies() async throws {
        let key = try await AndroidKeyAttestationVerifier().verifyAttestation(
            chain: try Self.chain("tegu-sdk36-TEE_EC_2026_ROOT"),
            expectedChallenge: Array("6417f92c-daef-4cc1-8828-5bb39338ffd5".utf8),
            policy: Self.policy("com.google.android.attestation", Self.digestEDk47k),
            at: try Self.date("2026-02-25T00:00:00Z")
        )
        XCTAssertEqual(key.publicKey.count, 65)
        XCTAssertEqual(key.certificateSerials.count, 5)
        XCTAssertEqual(key.certificateSerials.first, "1")
        XCTAssertEqual(key.certificateSerials[1], "2c85cdc15c3042f25698906669c35137")
        XCTAssertEqual(key.certificateSerials.last, "84a9d0297b0eb58ae7ff0e80de760605")
    }

    func testRemotelyProvisionedChainUnderTheRSARootVerifies() async throws {
        let key = try await AndroidKeyAttestationVerifier().verifyAttestation(
            chain: try Self.chain("akita-sdk34-TEE_EC_NONE"),
            expectedChallenge: Array("challenge".utf8),
            policy: Self.policy("com.google.wireless.android.security.attestationverifier.collector", Self.digestEDk47k, unlocked: true),
            at: try Self.date("2024-09-27T00:00:00Z")
        )
        XCTAssertEqual(key.certificateSerials[1], "4f47dffaecc3f58346fb7815514e0dcc")
    }

    func testChainsOfUnlockedDevicesAreRefusedByDefault() async throws {
        // Google's akita and factory samples come from devices with an unlocked bootloader: genuine
        // chains, but their system could have written any package name into them.
        let unlocked: [(String, String, [UInt8], String, String)] = [
            ("akita-sdk34-TEE_EC_NONE", "com.google.wireless.android.security.attestationverifier.collector", Self.digestEDk47k,
             "challenge", "2024-09-27T00:00:00Z"),
            ("factory-EC_SecurityLevel_TEE", "android", Self.digestSystem, "abc", "2018-07-10T00:00:00Z"),
        ]
        for (name, package, digest, challenge, date) in unlocked {
            let key = try AndroidKeyDescription(derEncoded: try Self.keyDescription(name))
            XCTAssertEqual(key.rootOfTrust?.deviceLocked, false, name)
            await assertAndroidFailure(.invalid, "unlocked bootloader") {
                _ = try await AndroidKeyAttestationVerifier().verifyAttestation(
                    chain: try Self.chain(name), expectedChallenge: Array(challenge.utf8), policy: Self.policy(package, digest),
                    at: try Self.date(date)
                )
            }
        }
        // The others are of locked devices with a verified boot.
        for name in ["tegu-sdk36-TEE_EC_2026_ROOT", "sony-xperia10-iii-sdk33-TEE_EC"] {
            let key = try AndroidKeyDescription(derEncoded: try Self.keyDescription(name))
            XCTAssertEqual(key.rootOfTrust, AndroidRootOfTrust(deviceLocked: true, verifiedBootState: .verified), name)
            XCTAssertEqual(key.origin, 0, name)
        }
    }

    /// The attestation extension of a fixture's leaf certificate.
    static func keyDescription(_ name: String) throws -> [UInt8] {
        let leaf = try Certificate(derEncoded: try chain(name)[0])
        let oid: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]
        return Array(try XCTUnwrap(leaf.extensions[oid: oid]).value)
    }

    func testFactoryChainVerifiesAtItsTimeAndThroughALaterRootIssuance() async throws {
        let chain = try Self.chain("factory-EC_SecurityLevel_TEE")
        let policy = Self.policy("android", Self.digestSystem, unlocked: true)
        let then = try await AndroidKeyAttestationVerifier().verifyAttestation(
            chain: chain, expectedChallenge: Array("abc".utf8), policy: policy, at: try Self.date("2018-07-10T00:00:00Z")
        )
        XCTAssertEqual(then.certificateSerials.last, "e8fa196314d2fa18")
        // The chain's own root (2016 issuance) expired on 2026-05-24; a later issuance of the same key stands in.
        let later = try await AndroidKeyAttestationVerifier().verifyAttestation(
            chain: chain, expectedChallenge: Array("abc".utf8), policy: policy, at: try Self.date("2026-11-01T00:00:00Z")
        )
        XCTAssertNotEqual(later.certificateSerials.last, "e8fa196314d2fa18")
        XCTAssertEqual(later.publicKey, then.publicKey)
    }

    func testFactoryChainWhoseBatchCertificateIsNotACAVerifies() async throws {
        // Sony Xperia 10 III: the certificate signing the leaf says CA:FALSE (AndroidChainPolicy).
        let chain = try Self.chain("sony-xperia10-iii-sdk33-TEE_EC")
        let challenge = Array(Data(base64Encoded: "Pq/k1d0AkN5aQrQytCSBr1zimWNlayWExZpJLeFtAMk=") ?? Data())
        let policy = Self.policy("com.android.vending", Array(Data(base64Encoded: "8P1sW0EPJcslw7UzRsiXL64w+O50Ed+RBICtay1g24M=") ?? Data()))
        let key = try await AndroidKeyAttestationVerifier().verifyAttestation(
            chain: chain, expectedChallenge: challenge, policy: policy, at: try Self.date("2026-05-01T00:00:00Z")
        )
        XCTAssertEqual(key.certificateSerials.count, 4)
        // Its batch and intermediate certificates expired on 2026-05-24; expiry is not waived for factory chains.
        await assertAndroidFailure(.invalid, "certificate 1 of the Android attestation chain has expired") {
            _ = try await AndroidKeyAttestationVerifier().verifyAttestation(
                chain: chain, expectedChallenge: challenge, policy: policy, at: try Self.date("2026-06-04T15:00:00Z")
            )
        }
    }

    func testExpiredTrustedRootIsRefused() async throws {
        // Trusting only the 2016 issuance, which expired on 2026-05-24, the factory chain no longer verifies.
        let only2016 = AndroidKeyAttestationVerifier(trustedRoots: [AndroidKeyAttestationVerifier.googleRoots[3]])
        await assertAndroidFailure(.invalid, "does not lead to a trusted root") {
            _ = try await only2016.verifyAttestation(
                chain: try Self.chain("factory-EC_SecurityLevel_TEE"), expectedChallenge: Array("abc".utf8),
                policy: Self.policy("android", Self.digestSystem), at: try Self.date("2026-11-01T00:00:00Z")
            )
        }
    }

    func testRealChainWithAnotherChallengeIsRefused() async throws {
        await assertAndroidFailure(.invalid, "challenge does not match") {
            _ = try await AndroidKeyAttestationVerifier().verifyAttestation(
                chain: try Self.chain("akita-sdk34-TEE_EC_NONE"),
                clientData: Array("challenge".utf8),
                policy: Self.policy("com.google.wireless.android.security.attestationverifier.collector", Self.digestEDk47k),
                at: try Self.date("2024-09-27T00:00:00Z")
            )
        }
    }

    func testRealChainAfterItsIntermediateExpiredIsRefused() async throws {
        await assertAndroidFailure(.invalid, "certificate 1 of the Android attestation chain has expired") {
            _ = try await AndroidKeyAttestationVerifier().verifyAttestation(
                chain: try Self.chain("tegu-sdk36-TEE_EC_2026_ROOT"),
                expectedChallenge: Array("6417f92c-daef-4cc1-8828-5bb39338ffd5".utf8),
                policy: Self.policy("com.google.android.attestation", Self.digestEDk47k),
                at: try Self.date("2026-11-24T00:00:00Z")
            )
        }
    }

    func testRealChainIsRefusedWithoutItsRoot() async throws {
        let ecRootOnly = AndroidKeyAttestationVerifier(trustedRoots: [try XCTUnwrap(AndroidKeyAttestationVerifier.googleRoots.last)])
        await assertAndroidFailure(.invalid, "does not lead to a trusted root") {
            _ = try await ecRootOnly.verifyAttestation(
                chain: try Self.chain("akita-sdk34-TEE_EC_NONE"),
                expectedChallenge: Array("challenge".utf8),
                policy: Self.policy("com.google.wireless.android.security.attestationverifier.collector", Self.digestEDk47k),
                at: try Self.date("2024-09-27T00:00:00Z")
            )
        }
    }

    func testRealChainWithARevokedIntermediateIsRefused() async throws {
        let list = try AndroidRevocationList(json: Array(#"{"entries": {"4F47DFFAECC3F58346FB7815514E0DCC": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}}}"#.utf8))
        await assertAndroidFailure(.revoked, "4f47dffaecc3f58346fb7815514e0dcc is revoked") {
            _ = try await AndroidKeyAttestationVerifier(revocations: list).verifyAttestation(
                chain: try Self.chain("akita-sdk34-TEE_EC_NONE"),
                expectedChallenge: Array("challenge".utf8),
                policy: Self.policy("com.google.wireless.android.security.attestationverifier.collector", Self.digestEDk47k),
                at: try Self.date("2024-09-27T00:00:00Z")
            )
        }
    }

    func testMutatedRealKeyDescriptionsParseOrFailCleanly() throws {
        for (index, name) in ["factory-EC_SecurityLevel_TEE", "tegu-sdk36-TEE_EC_2026_ROOT", "sony-xperia10-iii-sdk33-TEE_EC"].enumerated() {
            let leaf = try Certificate(derEncoded: try Self.chain(name)[0])
            let value = Array(try XCTUnwrap(leaf.extensions[oid: [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]]).value)
            XCTAssertNoThrow(try AndroidKeyDescription(derEncoded: value))
            assertEveryTruncationIsRefused(value)
            assertByteFlipsParseOrFailCleanly(value, seed: UInt64(index) &+ 0x5EED)
        }
    }

    func testRealKeyDescriptionsParse() throws {
        let leaf = try Certificate(derEncoded: try Self.chain("factory-EC_SecurityLevel_TEE")[0])
        let value = try XCTUnwrap(leaf.extensions[oid: [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]]).value
        let description = try AndroidKeyDescription(derEncoded: Array(value))
        XCTAssertEqual(description.attestationVersion, 3)
        XCTAssertEqual(description.keyMintVersion, 4)
        XCTAssertEqual(description.attestationSecurityLevel, .trustedEnvironment)
        XCTAssertEqual(description.attestationChallenge, Array("abc".utf8))
        XCTAssertEqual(description.softwareEnforcedApplicationID?.packages.count, 13)
        XCTAssertEqual(description.softwareEnforcedApplicationID?.packages.first, .init(name: "android", version: 29))
    }
}
