import Foundation
import SwiftASN1

extension AndroidKeyDescription {
    /// The largest extension accepted: real ones are a few kilobytes, even for shared-UID system apps.
    static let maximumEncodedSize = 64 * 1024
    /// Android refuses attestation challenges longer than 128 bytes.
    static let maximumChallengeSize = 128
    /// The tag of `attestationApplicationId` in an AuthorizationList.
    static let applicationIDTag: UInt = 709

    /// Parses the DER contents of the attestation extension.
    ///
    /// Unknown tagged fields of the authorization lists are skipped, whatever their contents;
    /// an `attestationApplicationId` is read from either list. Throws
    /// ``AttestationFailure/Code/invalid`` with one line for malformed, oversized or
    /// unexpected input (a field of the wrong type, a security level outside 0…2, a missing or
    /// extra element, a duplicated `attestationApplicationId`).
    public init(derEncoded bytes: [UInt8]) throws {
        guard bytes.count <= Self.maximumEncodedSize else {
            throw AttestationFailure.invalid("Android key description is larger than \(Self.maximumEncodedSize) bytes")
        }
        let root = try asn1Field("the extension") { try DER.parse(bytes) }
        var fields = try Self.children(of: root, identifier: .sequence, name: "the extension").makeIterator()

        func next(_ name: String) throws -> ASN1Node {
            guard let node = fields.next() else {
                throw AttestationFailure.invalid("Android key description ends before \(name)")
            }
            return node
        }

        let attestationVersion = try Self.nonNegativeInteger(next("attestationVersion"), name: "attestationVersion")
        let attestationLevel = try Self.securityLevel(next("attestationSecurityLevel"), name: "attestationSecurityLevel")
        let keyMintVersion = try Self.nonNegativeInteger(next("keyMintVersion"), name: "keyMintVersion")
        let keyMintLevel = try Self.securityLevel(next("keyMintSecurityLevel"), name: "keyMintSecurityLevel")
        let challenge = try Self.octets(next("attestationChallenge"), name: "attestationChallenge")
        guard challenge.count <= Self.maximumChallengeSize else {
            throw AttestationFailure.invalid("Android key description: attestationChallenge is longer than \(Self.maximumChallengeSize) bytes")
        }
        let uniqueID = try Self.octets(next("uniqueId"), name: "uniqueId")
        let software = try Self.applicationID(inAuthorizationList: next("softwareEnforced"), name: "softwareEnforced")
        let hardware = try Self.applicationID(inAuthorizationList: next("hardwareEnforced"), name: "hardwareEnforced")
        guard fields.next() == nil else {
            throw AttestationFailure.invalid("Android key description has elements after hardwareEnforced")
        }

        self.init(
            attestationVersion: attestationVersion,
            attestationSecurityLevel: attestationLevel,
            keyMintVersion: keyMintVersion,
            keyMintSecurityLevel: keyMintLevel,
            attestationChallenge: challenge,
            uniqueID: uniqueID,
            softwareEnforcedApplicationID: software,
            hardwareEnforcedApplicationID: hardware
        )
    }

    /// The `attestationApplicationId` of an AuthorizationList (a SEQUENCE of `[tag] EXPLICIT`
    /// fields), skipping every other field.
    static func applicationID(inAuthorizationList node: ASN1Node, name: String) throws -> AndroidAttestationApplicationID? {
        var found: AndroidAttestationApplicationID?
        for field in try children(of: node, identifier: .sequence, name: name) {
            guard field.identifier.tagClass == .contextSpecific else {
                throw AttestationFailure.invalid("Android key description: \(name) has an untagged field")
            }
            guard field.identifier.tagNumber == applicationIDTag else { continue }
            guard found == nil else {
                throw AttestationFailure.invalid("Android key description: \(name) has two attestationApplicationId fields")
            }
            guard case .constructed(let inner) = field.content else {
                throw AttestationFailure.invalid("Android key description: attestationApplicationId is not an explicit tag")
            }
            var nodes = inner.makeIterator()
            guard let octetNode = nodes.next(), nodes.next() == nil else {
                throw AttestationFailure.invalid("Android key description: attestationApplicationId is not one OCTET STRING")
            }
            let encoded = try octets(octetNode, name: "attestationApplicationId")
            found = try AndroidAttestationApplicationID(derEncoded: encoded)
        }
        return found
    }

    static func children(of node: ASN1Node, identifier: ASN1Identifier, name: String) throws -> ASN1NodeCollection {
        guard node.identifier == identifier, case .constructed(let nodes) = node.content else {
            throw AttestationFailure.invalid("Android key description: \(name) is not a \(identifier == .set ? "SET" : "SEQUENCE")")
        }
        return nodes
    }

    static func nonNegativeInteger(_ node: ASN1Node, name: String) throws -> Int {
        let value = try asn1Field(name) { try Int(derEncoded: node) }
        guard value >= 0 else { throw AttestationFailure.invalid("Android key description: \(name) is negative") }
        return value
    }

    static func securityLevel(_ node: ASN1Node, name: String) throws -> AndroidKeyAttestationPolicy.SecurityLevel {
        let raw = try asn1Field(name) { try Int(derEncoded: node, withIdentifier: .enumerated) }
        guard let level = AndroidKeyAttestationPolicy.SecurityLevel(rawValue: raw) else {
            throw AttestationFailure.invalid("Android key description: \(name) is not software, tee or strongbox")
        }
        return level
    }

    static func octets(_ node: ASN1Node, name: String) throws -> [UInt8] {
        Array(try asn1Field(name) { try ASN1OctetString(derEncoded: node) }.bytes)
    }
}

/// Runs a SwiftASN1 decoding step, turning its errors (whose text can span lines and quote
/// input) into one line naming `name`.
func asn1Field<T>(_ name: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let failure as AttestationFailure {
        throw failure
    } catch {
        throw AttestationFailure.invalid("Android key description: \(name) is not valid DER of the expected type")
    }
}
