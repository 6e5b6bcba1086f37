import CofferAttestation
import Crypto
import Foundation
import SwiftASN1
import X509

/// A stand-in for Apple's App Attest CA in tests: a P-256 root, an intermediate, and credential
/// certificates, with attestation objects and assertions built around them and knobs to break each field.
struct AppleTestAuthority {
    /// The time tests verify at: every certificate the authority makes is valid then by default.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let policy = AppleAppAttestPolicy(teamID: "TEAMID1234", bundleID: "com.example.app", environment: .production)

    let rootKey = P256.Signing.PrivateKey()
    let intermediateKey = P256.Signing.PrivateKey()
    let root: Certificate
    let intermediate: Certificate

    init(name: String = "Test App Attestation") throws {
        let rootName = try DistinguishedName { CommonName("\(name) Root CA") }
        let intermediateName = try DistinguishedName { CommonName("\(name) CA 1") }
        root = try Self.caCertificate(
            subject: rootName, key: rootKey.publicKey, issuer: rootName, issuerKey: rootKey)
        intermediate = try Self.caCertificate(
            subject: intermediateName, key: intermediateKey.publicKey, issuer: rootName, issuerKey: rootKey)
    }

    /// An app install's key pair, with App Attest's key identifier.
    struct Device {
        let key = P256.Signing.PrivateKey()
        var publicKey: [UInt8] { Array(key.publicKey.x963Representation) }
        var keyID: [UInt8] { Array(SHA256.hash(data: publicKey)) }
    }

    /// What an attestation says; each default is what a genuine device would send.
    struct Knobs {
        var fmt = "apple-appattest"
        var appID = AppleTestAuthority.policy.appID
        var counter: UInt32 = 0
        var aaguid = AppleAppAttestPolicy.Environment.production.aaguid
        /// The credential ID in the authenticator data; the device's key ID when nil.
        var credentialID: [UInt8]?
        /// The client data the certificate's nonce is computed over; the verified client data when nil.
        var nonceClientData: [UInt8]?
        /// The key the credential certificate certifies; the device's when nil.
        var certifiedKey: P256.Signing.PublicKey?
        /// Who signs the credential certificate and is sent as intermediate; this authority when nil.
        var issuer: AppleTestAuthority?
        var includeIntermediate = true
        var notValidBefore = AppleTestAuthority.now - 86_400
        var notValidAfter = AppleTestAuthority.now + 86_400
        /// CBOR bytes appended to the authenticator data after the credential key.
        var authDataTrailer: [UInt8] = []
        var receipt: [UInt8] = Array("receipt".utf8)
    }

    /// The authenticator data of an attestation.
    func attestationAuthData(device: Device, knobs: Knobs) -> [UInt8] {
        let credentialID = knobs.credentialID ?? device.keyID
        let x963 = device.publicKey
        let coseKey = CBORWriter.encode(.map([
            CBORMapEntry(key: .unsigned(1), value: .unsigned(2)),
            CBORMapEntry(key: .unsigned(3), value: .negative(6)),
            CBORMapEntry(key: .negative(0), value: .unsigned(1)),
            CBORMapEntry(key: .negative(1), value: .bytes(Array(x963[1..<33]))),
            CBORMapEntry(key: .negative(2), value: .bytes(Array(x963[33..<65]))),
        ]))
        return Array(SHA256.hash(data: Array(knobs.appID.utf8))) + [AppleAuthenticatorData.attestedCredentialFlag]
            + CBORWriter.bigEndian(UInt64(knobs.counter), 4) + knobs.aaguid
            + CBORWriter.bigEndian(UInt64(credentialID.count), 2) + credentialID + coseKey + knobs.authDataTrailer
    }

    /// An attestation object for `device` over `clientData`, as `knobs` say.
    func attestation(device: Device, clientData: [UInt8], knobs: Knobs = Knobs()) throws -> [UInt8] {
        try attestation(device: device, clientDataHash: Array(SHA256.hash(data: knobs.nonceClientData ?? clientData)), knobs: knobs)
    }

    /// An attestation object for `device` over a client data hash, as DCAppAttestService is asked for one.
    func attestation(device: Device, clientDataHash: [UInt8], knobs: Knobs = Knobs()) throws -> [UInt8] {
        let authData = attestationAuthData(device: device, knobs: knobs)
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        let issuer = knobs.issuer ?? self
        let leaf = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(knobs.certifiedKey ?? device.key.publicKey),
            notValidBefore: knobs.notValidBefore,
            notValidAfter: knobs.notValidAfter,
            issuer: issuer.intermediate.subject,
            subject: try DistinguishedName { CommonName("credential") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Certificate.Extension(
                    oid: [1, 2, 840, 113_635, 100, 8, 2], critical: false, value: Self.nonceExtensionValue(nonce)[...])
            },
            issuerPrivateKey: Certificate.PrivateKey(issuer.intermediateKey))
        var x5c: [CBORValue] = [.bytes(try Self.der(leaf))]
        if knobs.includeIntermediate { x5c.append(.bytes(try Self.der(issuer.intermediate))) }
        return CBORWriter.encode(CBORWriter.map([
            ("fmt", .text(knobs.fmt)),
            ("attStmt", CBORWriter.map([("x5c", .array(x5c)), ("receipt", .bytes(knobs.receipt))])),
            ("authData", .bytes(authData)),
        ]))
    }

    /// An assertion by `device` over `clientData` with `counter`, signed by `signer` (the device's key by default).
    static func assertion(
        device: Device, clientData: [UInt8], counter: UInt32, appID: String = policy.appID,
        signer: P256.Signing.PrivateKey? = nil
    ) throws -> [UInt8] {
        let authData = Array(SHA256.hash(data: Array(appID.utf8))) + [AppleAuthenticatorData.attestedCredentialFlag]
            + CBORWriter.bigEndian(UInt64(counter), 4)
        let nonce = Array(SHA256.hash(data: authData + Array(SHA256.hash(data: clientData))))
        // ECDSA-SHA256 over the nonce bytes, as the device's Secure Enclave signs.
        let signature = try (signer ?? device.key).signature(for: nonce)
        return CBORWriter.encode(CBORWriter.map([
            ("signature", .bytes(Array(signature.derRepresentation))),
            ("authenticatorData", .bytes(authData)),
        ]))
    }

    /// `SEQUENCE { [1] EXPLICIT OCTET STRING nonce }` for a 32-byte nonce.
    static func nonceExtensionValue(_ nonce: [UInt8]) -> [UInt8] {
        [0x30, UInt8(nonce.count + 4), 0xA1, UInt8(nonce.count + 2), 0x04, UInt8(nonce.count)] + nonce
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    private static func caCertificate(
        subject: DistinguishedName, key: P256.Signing.PublicKey, issuer: DistinguishedName,
        issuerKey: P256.Signing.PrivateKey
    ) throws -> Certificate {
        try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key),
            notValidBefore: now - 365 * 86_400,
            notValidAfter: now + 365 * 86_400,
            issuer: issuer,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(issuerKey))
    }
}
