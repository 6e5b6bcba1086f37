import CofferAttestation
import Crypto
import Foundation
import SwiftASN1
import X509

/// A throw-away Android attestation PKI for tests: a P-256 root and intermediate (CAs, with
/// critical basic constraints and key usage, as Google's are) and leaves (not CAs, digital
/// signature only) that carry a KeyDescription extension.
struct AndroidTestAuthority {
    static let extensionOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]
    /// The time the test chains are checked at.
    static let now = Date(timeIntervalSince1970: 1_760_000_000)

    let rootKey = P256.Signing.PrivateKey()
    let intermediateKey = P256.Signing.PrivateKey()
    let root: Certificate
    let intermediate: Certificate
    let rootName: DistinguishedName
    let intermediateName: DistinguishedName

    init(name: String = "Coffer Test", intermediateCarriesExtension: [UInt8]? = nil) throws {
        rootName = try DistinguishedName { CommonName("\(name) Root") }
        intermediateName = try DistinguishedName {
            OrganizationName("TEE")
            CommonName("\(name) Intermediate")
        }
        root = try Self.caCertificate(
            serial: [0x00, 0xE8, 0xFA, 0x19, 0x63], key: rootKey, subject: rootName, issuer: rootName, issuerKey: rootKey,
            extraExtension: nil
        )
        intermediate = try Self.caCertificate(
            serial: [0x2C, 0x85, 0xCD], key: intermediateKey, subject: intermediateName, issuer: rootName, issuerKey: rootKey,
            extraExtension: intermediateCarriesExtension
        )
    }

    static func caCertificate(
        serial: [UInt8], key: P256.Signing.PrivateKey, subject: DistinguishedName, issuer: DistinguishedName,
        issuerKey: P256.Signing.PrivateKey, extraExtension: [UInt8]?, isCA: Bool = true, maxPathLength: Int? = nil
    ) throws -> Certificate {
        try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(bytes: serial),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-365 * 86_400),
            notValidAfter: now.addingTimeInterval(10 * 365 * 86_400),
            issuer: issuer,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                if isCA {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: maxPathLength))
                    Critical(KeyUsage(keyCertSign: true))
                } else {
                    // An old factory batch certificate: CA:FALSE, digital signature only.
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                }
                if let extraExtension {
                    Certificate.Extension(oid: extensionOID, critical: false, value: ArraySlice(extraExtension))
                }
            },
            issuerPrivateKey: Certificate.PrivateKey(issuerKey)
        )
    }

    /// A per-device batch certificate issued by the intermediate, as factory-provisioned devices
    /// have below Google's intermediate: `isCA` false reproduces the old non-CA ones.
    func batch(key: P256.Signing.PrivateKey, isCA: Bool) throws -> (Certificate, DistinguishedName) {
        let name = try DistinguishedName {
            OrganizationName("TEE")
            CommonName("3e7fb6a1ee4bd568")
        }
        let certificate = try Self.caCertificate(
            serial: [0x0B, 0xA7], key: key, subject: name, issuer: intermediateName, issuerKey: intermediateKey,
            extraExtension: nil, isCA: isCA
        )
        return (certificate, name)
    }

    /// A leaf for `publicKey` issued under `issuerName` by `issuerKey`.
    static func leaf(
        keyDescription: [UInt8]?, publicKey: Certificate.PublicKey, issuerName: DistinguishedName, issuerKey: P256.Signing.PrivateKey,
        subject: DistinguishedName? = nil
    ) throws -> Certificate {
        try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(bytes: [0x01]),
            publicKey: publicKey,
            notValidBefore: Date(timeIntervalSince1970: 0),
            notValidAfter: Date(timeIntervalSince1970: 2_461_449_600),
            issuer: issuerName,
            subject: try subject ?? DistinguishedName { CommonName("Android Keystore Key") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(KeyUsage(digitalSignature: true))
                if let keyDescription {
                    Certificate.Extension(oid: extensionOID, critical: false, value: ArraySlice(keyDescription))
                }
            },
            issuerPrivateKey: Certificate.PrivateKey(issuerKey)
        )
    }

    /// A leaf for `publicKey` issued by the intermediate, carrying `keyDescription` (none if nil).
    func leaf(
        keyDescription: [UInt8]?,
        publicKey: Certificate.PublicKey,
        serial: [UInt8] = [0x01],
        notValidBefore: Date = Date(timeIntervalSince1970: 0),
        notValidAfter: Date = Date(timeIntervalSince1970: 2_461_449_600)
    ) throws -> Certificate {
        try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(bytes: serial),
            publicKey: publicKey,
            notValidBefore: notValidBefore,
            notValidAfter: notValidAfter,
            issuer: intermediateName,
            subject: try DistinguishedName { CommonName("Android Keystore Key") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(KeyUsage(digitalSignature: true))
                if let keyDescription {
                    Certificate.Extension(oid: Self.extensionOID, critical: false, value: ArraySlice(keyDescription))
                }
            },
            issuerPrivateKey: Certificate.PrivateKey(intermediateKey)
        )
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// Leaf, intermediate and root, DER, as a device sends them.
    func chain(leaf: Certificate) throws -> [[UInt8]] {
        try [leaf, intermediate, root].map(Self.der)
    }

    /// A verifier trusting this authority's root.
    func verifier(revocations: AndroidRevocationList = .empty) -> AndroidKeyAttestationVerifier {
        AndroidKeyAttestationVerifier(trustedRoots: [root], revocations: revocations)
    }

    /// The serials of the chain in status-list form: leaf, intermediate, root.
    static let leafSerial = "1"
    static let intermediateSerial = "2c85cd"
    static let rootSerial = "e8fa1963"
}
