import Foundation
import SwiftASN1

extension AndroidKeyDescription {
    /// The largest extension accepted: real ones are a few kilobytes, even for shared-UID system apps.
    static let maximumEncodedSize = 64 * 1024
    /// Android refuses attestation challenges longer than 128 bytes.
    static let maximumChallengeSize = 128
    /// The tag of `attestationApplicationId` in an AuthorizationList.
    static let applicationIDTag: UInt = 709
    /// The tag of `rootOfTrust`.
    static let rootOfTrustTag: UInt = 704
    /// The tag of `origin`.
    static let originTag: UInt = 702

    /// The fields of an AuthorizationList Coffer reads.
    struct AuthorizationFields {
        var applicationID: AndroidAttestationApplicationID?
        var rootOfTrust: AndroidRootOfTrust?
        var origin: Int?
    }

    /// Parses the DER contents of the attestation extension.
    ///
    /// Unknown tagged fields of the authorization lists are skipped, whatever their contents;
    /// an `attestationApplicationId` is read from either list. Throws
    /// ``AttestationFailure/Code/invalid`` with one line for malformed, oversized or
    /// unexpected input (a field of the wrong type, a security level outside 0…2, a missing or
    /// extra element, a duplicated field it reads). `rootOfTrust` and `origin` are read from the
    /// hardware-enforced list only.
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
        let software = try Self.fields(inAuthorizationList: next("softwareEnforced"), name: "softwareEnforced", hardware: false)
        let hardware = try Self.fields(inAuthorizationList: next("hardwareEnforced"), name: "hardwareEnforced", hardware: true)
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
            softwareEnforcedApplicationID: software.applicationID,
            hardwareEnforcedApplicationID: hardware.applicationID,
            rootOfTrust: hardware.rootOfTrust,
            origin: hardware.origin
        )
    }

    /// The fields Coffer reads of an AuthorizationList (a SEQUENCE of `[tag] EXPLICIT` fields),
    /// skipping every other field: `attestationApplicationId`, and in the hardware-enforced list
    /// `rootOfTrust` and `origin`.
    static func fields(inAuthorizationList node: ASN1Node, name: String, hardware: Bool) throws -> AuthorizationFields {
        var found = AuthorizationFields()
        var seen: Set<UInt> = []
        for field in try children(of: node, identifier: .sequence, name: name) {
            guard field.identifier.tagClass == .contextSpecific else {
                throw AttestationFailure.invalid("Android key description: \(name) has an untagged field")
            }
            let tag = field.identifier.tagNumber
            guard tag == applicationIDTag || (hardware && (tag == rootOfTrustTag || tag == originTag)) else { continue }
            guard seen.insert(tag).inserted else {
                throw AttestationFailure.invalid("Android key description: \(name) has field [\(tag)] twice")
            }
            guard case .constructed(let inner) = field.content else {
                throw AttestationFailure.invalid("Android key description: field [\(tag)] of \(name) is not an explicit tag")
            }
            var nodes = inner.makeIterator()
            guard let value = nodes.next(), nodes.next() == nil else {
                throw AttestationFailure.invalid("Android key description: field [\(tag)] of \(name) is not one value")
            }
            switch tag {
            case applicationIDTag:
                found.applicationID = try AndroidAttestationApplicationID(derEncoded: octets(value, name: "attestationApplicationId"))
            case rootOfTrustTag:
                found.rootOfTrust = try rootOfTrust(value)
            default:
                found.origin = try nonNegativeInteger(value, name: "origin")
            }
        }
        return found
    }

    /// A `RootOfTrust`: the boot key and hash are skipped, `deviceLocked` and `verifiedBootState`
    /// read; fewer than three elements, or more than four, are refused.
    static func rootOfTrust(_ node: ASN1Node) throws -> AndroidRootOfTrust {
        let elements = Array(try children(of: node, identifier: .sequence, name: "rootOfTrust"))
        guard (3...4).contains(elements.count) else {
            throw AttestationFailure.invalid("Android key description: rootOfTrust has \(elements.count) elements, not 3 or 4")
        }
        _ = try octets(elements[0], name: "verifiedBootKey")
        let locked = try asn1Field("deviceLocked") { try Bool(derEncoded: elements[1]) }
        let raw = try asn1Field("verifiedBootState") { try Int(derEncoded: elements[2], withIdentifier: .enumerated) }
        guard let state = AndroidRootOfTrust.VerifiedBootState(rawValue: raw) else {
            throw AttestationFailure.invalid("Android key description: verifiedBootState is not 0 to 3")
        }
        if elements.count == 4 { _ = try octets(elements[3], name: "verifiedBootHash") }
        return AndroidRootOfTrust(deviceLocked: locked, verifiedBootState: state)
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
