@testable import AttestationTestSupport
import CofferAttestation
import CofferFormat
import Crypto
import Foundation
import X509
import XCTest

final class AndroidKeyAttestationTests: XCTestCase {
    let clientData = AttestationClientData.attestation(
        challenge: [UInt8](repeating: 0xC0, count: 32), devicePublicKey: [UInt8](repeating: 0x5E, count: 32)
    )
    let policy = AndroidKeyAttestationPolicy(
        packageName: AndroidTestKeyDescription.packageName,
        signingCertificateDigests: [[UInt8](repeating: 1, count: 32), AndroidTestKeyDescription.signingDigest],
        minimumSecurityLevel: .trustedEnvironment
    )

    var description: AndroidTestKeyDescription {
        AndroidTestKeyDescription(challenge: Array(SHA256.hash(data: clientData)))
    }

    /// Attests a fresh P-256 key with `description`'s extension through `authority`'s chain.
    func attest(
        _ description: AndroidTestKeyDescription?,
        authority: AndroidTestAuthority? = nil,
        verifier: AndroidKeyAttestationVerifier? = nil,
        policy: AndroidKeyAttestationPolicy? = nil,
        key: P256.Signing.PrivateKey = P256.Signing.PrivateKey(),
        chain: ((AndroidTestAuthority, Certificate) throws -> [[UInt8]])? = nil
    ) async throws -> AttestedKey {
        let authority = try authority ?? AndroidTestAuthority()
        let leaf = try authority.leaf(keyDescription: try description?.derEncoded(), publicKey: .init(key.publicKey))
        let certificates = try chain?(authority, leaf) ?? authority.chain(leaf: leaf)
        return try await (verifier ?? authority.verifier()).verifyAttestation(
            chain: certificates, clientData: clientData, policy: policy ?? self.policy, at: AndroidTestAuthority.now
        )
    }

    func testValidChainIsAccepted() async throws {
        let key = P256.Signing.PrivateKey()
        let attested = try await attest(description, key: key)
        XCTAssertEqual(attested.publicKey, Array(key.publicKey.x963Representation))
        XCTAssertEqual(attested.publicKey.count, 65)
        XCTAssertEqual(attested.keyID, Array(SHA256.hash(data: attested.publicKey)))
        XCTAssertEqual(attested.counter, 0)
        XCTAssertEqual(
            attested.certificateSerials,
            [AndroidTestAuthority.leafSerial, AndroidTestAuthority.intermediateSerial, AndroidTestAuthority.rootSerial]
        )
    }

    func testChainWithoutItsRootIsAccepted() async throws {
        let attested = try await attest(description) { authority, leaf in
            try [leaf, authority.intermediate].map(AndroidTestAuthority.der)
        }
        XCTAssertEqual(attested.certificateSerials.count, 3)
    }

    func testApplicationIDInTheHardwareListIsAccepted() async throws {
        var hardware = description
        hardware.placement = .hardware
        _ = try await attest(hardware)
    }

    func testWrongChallengeIsRefused() async throws {
        var other = description
        other.challenge = Array(SHA256.hash(data: Array("other client data".utf8)))
        await assertAndroidFailure(.invalid, "challenge does not match") { _ = try await self.attest(other) }
    }

    func testWrongPackageIsRefused() async throws {
        var other = description
        other.packages = [("com.example.other", 1)]
        await assertAndroidFailure(.invalid, "not for package com.example.coffer") { _ = try await self.attest(other) }
    }

    func testHardwareApplicationIDIsPreferredOverSoftware() async throws {
        // The software list names the app, the hardware list another package: the hardware one counts.
        var both = description
        both.placement = .both
        both.hardwarePackages = [("com.example.other", 1)]
        let parsed = try AndroidKeyDescription(derEncoded: try both.derEncoded())
        XCTAssertEqual(parsed.softwareEnforcedApplicationID?.packages.first?.name, AndroidTestKeyDescription.packageName)
        XCTAssertEqual(parsed.attestationApplicationID?.packages.first?.name, "com.example.other")
        await assertAndroidFailure(.invalid, "not for package") { _ = try await self.attest(both) }
        both.hardwarePackages = nil
        _ = try await attest(both)
    }

    func testWrongSigningDigestIsRefused() async throws {
        var other = description
        other.signatureDigests = [[UInt8](repeating: 2, count: 32)]
        await assertAndroidFailure(.invalid, "no signing certificate the policy accepts") { _ = try await self.attest(other) }
    }

    func testMissingApplicationIDIsRefused() async throws {
        var none = description
        none.placement = .none
        await assertAndroidFailure(.invalid, "no attestationApplicationId") { _ = try await self.attest(none) }
    }

    func testSoftwareAttestationIsRefusedWhenTheTEEIsRequired() async throws {
        var software = description
        software.attestationSecurityLevel = 0
        software.keyMintSecurityLevel = 0
        await assertAndroidFailure(.invalid, "attestation security level software is below the policy's tee") {
            _ = try await self.attest(software)
        }
        let softwarePolicy = AndroidKeyAttestationPolicy(
            packageName: policy.packageName, signingCertificateDigests: policy.signingCertificateDigests, minimumSecurityLevel: .software
        )
        _ = try await attest(software, policy: softwarePolicy)
    }

    func testSoftwareKeyMintLevelIsRefusedUnderATEEAttestation() async throws {
        var mixed = description
        mixed.keyMintSecurityLevel = 0
        await assertAndroidFailure(.invalid, "KeyMint security level software is below the policy's tee") {
            _ = try await self.attest(mixed)
        }
    }

    func testTEEIsRefusedWhenStrongBoxIsRequired() async throws {
        let strongBox = AndroidKeyAttestationPolicy(
            packageName: policy.packageName, signingCertificateDigests: policy.signingCertificateDigests, minimumSecurityLevel: .strongBox
        )
        await assertAndroidFailure(.invalid, "security level tee is below the policy's strongbox") {
            _ = try await self.attest(self.description, policy: strongBox)
        }
        var strong = description
        strong.attestationSecurityLevel = 2
        strong.keyMintSecurityLevel = 2
        _ = try await attest(strong, policy: strongBox)
    }

    func testUnlockedOrUnverifiedDevicesAreRefused() async throws {
        var unlocked = description
        unlocked.deviceLocked = false
        await assertAndroidFailure(.invalid, "unlocked bootloader") { _ = try await self.attest(unlocked) }
        for (state, name) in [(1, "self-signed"), (2, "unverified"), (3, "failed")] {
            var other = description
            other.verifiedBootState = state
            await assertAndroidFailure(.invalid, "boot is \(name)") { _ = try await self.attest(other) }
        }
        var missing = description
        missing.includeRootOfTrust = false
        await assertAndroidFailure(.invalid, "no hardware-enforced rootOfTrust") { _ = try await self.attest(missing) }
        // A policy that lets them in (a fleet of development boards) accepts each.
        let relaxed = AndroidKeyAttestationPolicy(
            packageName: policy.packageName, signingCertificateDigests: policy.signingCertificateDigests,
            minimumSecurityLevel: .trustedEnvironment, requiresVerifiedBoot: false
        )
        _ = try await attest(unlocked, policy: relaxed)
        _ = try await attest(missing, policy: relaxed)
    }

    func testKeyImportedIntoTheDeviceIsRefused() async throws {
        var imported = description
        imported.origin = 2
        await assertAndroidFailure(.invalid, "imported into the device (origin 2)") { _ = try await self.attest(imported) }
        var unstated = description
        unstated.origin = nil
        _ = try await attest(unstated)
    }

    func testChainFromAnUnrelatedCAIsRefused() async throws {
        let trusted = try AndroidTestAuthority(name: "Trusted")
        let unrelated = try AndroidTestAuthority(name: "Unrelated")
        await assertAndroidFailure(.invalid, "does not lead to a trusted root") {
            _ = try await self.attest(self.description, authority: unrelated, verifier: trusted.verifier())
        }
    }

    func testTestChainIsRefusedByGooglesRoots() async throws {
        await assertAndroidFailure(.invalid, "does not lead to a trusted root") {
            _ = try await self.attest(self.description, verifier: AndroidKeyAttestationVerifier())
        }
    }

    func testChainMissingItsIntermediateIsRefused() async throws {
        await assertAndroidFailure(.invalid, "does not lead to a trusted root") {
            _ = try await self.attest(self.description) { authority, leaf in
                try [leaf, authority.root].map(AndroidTestAuthority.der)
            }
        }
    }

    func testExpiredLeafIsRefused() async throws {
        let authority = try AndroidTestAuthority()
        let leaf = try authority.leaf(
            keyDescription: try description.derEncoded(),
            publicKey: .init(P256.Signing.PrivateKey().publicKey),
            notValidAfter: AndroidTestAuthority.now.addingTimeInterval(-86_400)
        )
        await assertAndroidFailure(.invalid, "certificate 0 of the Android attestation chain has expired") {
            _ = try await authority.verifier().verifyAttestation(
                chain: try authority.chain(leaf: leaf), clientData: self.clientData, policy: self.policy, at: AndroidTestAuthority.now
            )
        }
    }

    func testLeafNotYetValidIsRefused() async throws {
        let authority = try AndroidTestAuthority()
        let leaf = try authority.leaf(
            keyDescription: try description.derEncoded(),
            publicKey: .init(P256.Signing.PrivateKey().publicKey),
            notValidBefore: AndroidTestAuthority.now.addingTimeInterval(86_400)
        )
        await assertAndroidFailure(.invalid, "certificate 0 of the Android attestation chain is not valid yet") {
            _ = try await authority.verifier().verifyAttestation(
                chain: try authority.chain(leaf: leaf), clientData: self.clientData, policy: self.policy, at: AndroidTestAuthority.now
            )
        }
    }

    func testMissingExtensionIsRefused() async throws {
        await assertAndroidFailure(.invalid, "leaf has no key attestation extension") { _ = try await self.attest(nil) }
    }

    func testExtensionInAnIntermediateIsRefused() async throws {
        let authority = try AndroidTestAuthority(intermediateCarriesExtension: try description.derEncoded())
        await assertAndroidFailure(.invalid, "a CA certificate of the Android attestation chain carries an attestation extension") {
            _ = try await self.attest(self.description, authority: authority)
        }
    }

    func testNonP256LeafKeyIsRefused() async throws {
        let authority = try AndroidTestAuthority()
        let leaf = try authority.leaf(keyDescription: try description.derEncoded(), publicKey: .init(P384.Signing.PrivateKey().publicKey))
        await assertAndroidFailure(.invalid, "not a P-256 key") {
            _ = try await authority.verifier().verifyAttestation(
                chain: try authority.chain(leaf: leaf), clientData: self.clientData, policy: self.policy, at: AndroidTestAuthority.now
            )
        }
    }

    func testMalformedChainsAreRefused() async throws {
        let verifier = try AndroidTestAuthority().verifier()
        await assertAndroidFailure(.invalid, "chain is empty") {
            _ = try await verifier.verifyAttestation(chain: [], clientData: self.clientData, policy: self.policy, at: AndroidTestAuthority.now)
        }
        await assertAndroidFailure(.invalid, "more than 8 certificates") {
            _ = try await verifier.verifyAttestation(
                chain: Array(repeating: [0x30, 0x00], count: 9), clientData: self.clientData, policy: self.policy, at: AndroidTestAuthority.now
            )
        }
        await assertAndroidFailure(.invalid, "certificate 0 of the Android attestation chain is not a DER X.509 certificate") {
            _ = try await verifier.verifyAttestation(
                chain: [[0x30, 0x03, 0x02, 0x01, 0x01]], clientData: self.clientData, policy: self.policy, at: AndroidTestAuthority.now
            )
        }
        await assertAndroidFailure(.invalid, "larger than 16384 bytes") {
            _ = try await verifier.verifyAttestation(
                chain: [[UInt8](repeating: 0, count: 16_385)], clientData: self.clientData, policy: self.policy, at: AndroidTestAuthority.now
            )
        }
    }

    func testSelfIssuedCertificateBeforeTheEndIsRefused() async throws {
        await assertAndroidFailure(.invalid, "certificate 1 of the Android attestation chain is self-issued but not last") {
            _ = try await self.attest(self.description) { authority, leaf in
                try [leaf, authority.root, authority.intermediate].map(AndroidTestAuthority.der)
            }
        }
    }
}
