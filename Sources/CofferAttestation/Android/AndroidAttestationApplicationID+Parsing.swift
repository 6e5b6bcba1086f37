import Foundation
import SwiftASN1

extension AndroidAttestationApplicationID {
    /// More packages than any shared UID has; a bound on work, not a policy.
    static let maximumPackages = 256
    /// More signing certificates than any app has (key rotation keeps a short lineage).
    static let maximumDigests = 64
    /// Android package names are at most 255 characters.
    static let maximumNameSize = 1024
    /// SHA-256 is 32 bytes; room for a longer digest should Android move to one.
    static let maximumDigestSize = 64

    /// Parses the DER `AttestationApplicationId` carried in the OCTET STRING of tag 709.
    ///
    /// SET OF elements are read in the order given (devices do not always sort them as DER
    /// asks). Throws ``AttestationFailure/Code/invalid`` with one line for malformed input.
    init(derEncoded bytes: [UInt8]) throws {
        let root = try asn1Field("attestationApplicationId") { try DER.parse(bytes) }
        var fields = try AndroidKeyDescription.children(of: root, identifier: .sequence, name: "attestationApplicationId")
            .makeIterator()
        guard let packageSet = fields.next(), let digestSet = fields.next(), fields.next() == nil else {
            throw AttestationFailure.invalid("Android key description: attestationApplicationId is not two SETs")
        }

        var packages: [Package] = []
        for info in try AndroidKeyDescription.children(of: packageSet, identifier: .set, name: "packageInfos") {
            guard packages.count < Self.maximumPackages else {
                throw AttestationFailure.invalid("Android key description: more than \(Self.maximumPackages) packages")
            }
            packages.append(try Package(packageInfo: info))
        }

        var digests: [[UInt8]] = []
        for node in try AndroidKeyDescription.children(of: digestSet, identifier: .set, name: "signatureDigests") {
            guard digests.count < Self.maximumDigests else {
                throw AttestationFailure.invalid("Android key description: more than \(Self.maximumDigests) signature digests")
            }
            let digest = try AndroidKeyDescription.octets(node, name: "signatureDigest")
            guard digest.count <= Self.maximumDigestSize else {
                throw AttestationFailure.invalid("Android key description: a signature digest is longer than \(Self.maximumDigestSize) bytes")
            }
            digests.append(digest)
        }
        self.init(packages: packages, signatureDigests: digests)
    }
}

extension AndroidAttestationApplicationID.Package {
    /// Parses an `AttestationPackageInfo` SEQUENCE { packageName OCTET STRING, version INTEGER }.
    init(packageInfo node: ASN1Node) throws {
        var fields = try AndroidKeyDescription.children(of: node, identifier: .sequence, name: "packageInfo").makeIterator()
        guard let nameNode = fields.next(), let versionNode = fields.next(), fields.next() == nil else {
            throw AttestationFailure.invalid("Android key description: a packageInfo is not a name and a version")
        }
        let nameBytes = try AndroidKeyDescription.octets(nameNode, name: "packageName")
        guard nameBytes.count <= AndroidAttestationApplicationID.maximumNameSize else {
            throw AttestationFailure.invalid("Android key description: a package name is longer than \(AndroidAttestationApplicationID.maximumNameSize) bytes")
        }
        guard let name = String(bytes: nameBytes, encoding: .utf8) else {
            throw AttestationFailure.invalid("Android key description: a package name is not UTF-8")
        }
        let version = try asn1Field("package version") { try Int64(derEncoded: versionNode) }
        self.init(name: name, version: version)
    }
}
