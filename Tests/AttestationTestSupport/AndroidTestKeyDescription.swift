import Crypto
import SwiftASN1

/// A KeyDescription (the Android attestation extension) built field by field, for tests: each
/// knob changes one field of an otherwise realistic TEE attestation.
struct AndroidTestKeyDescription {
    /// Where the attestationApplicationId field goes.
    enum Placement { case software, hardware, both, none }

    static let packageName = "com.example.coffer"
    static let signingDigest = Array(SHA256.hash(data: Array("example signing certificate".utf8)))

    var attestationVersion = 300
    var attestationSecurityLevel = 1
    var keyMintVersion = 300
    var keyMintSecurityLevel = 1
    var challenge: [UInt8]
    var uniqueID: [UInt8] = []
    var packages: [(name: String, version: Int64)] = [(packageName, 42)]
    var signatureDigests: [[UInt8]] = [signingDigest]
    var placement = Placement.software
    /// Packages of the hardware-enforced application ID when it differs from the software one.
    var hardwarePackages: [(name: String, version: Int64)]?
    /// Tagged fields Coffer does not read (purpose, algorithm, creationDateTime, rootOfTrust, …)
    /// around the application ID, so parsers must skip them.
    var includeOtherFields = true
    /// The hardware-enforced rootOfTrust's `deviceLocked` and `verifiedBootState` (a locked,
    /// verified device by default), and whether the field is there at all.
    var deviceLocked = true
    var verifiedBootState = 0
    var includeRootOfTrust = true
    /// The hardware-enforced `origin` (0: generated on the device), nil to leave it out.
    var origin: Int? = 0

    init(challenge: [UInt8]) {
        self.challenge = challenge
    }

    /// The DER AttestationApplicationId.
    func applicationIDDER(packages: [(name: String, version: Int64)]? = nil) throws -> [UInt8] {
        let packages = packages ?? self.packages
        var s = DER.Serializer()
        try s.appendConstructedNode(identifier: .sequence) { s in
            try s.appendConstructedNode(identifier: .set) { s in
                for package in packages {
                    try s.appendConstructedNode(identifier: .sequence) { s in
                        try s.serialize(ASN1OctetString(contentBytes: ArraySlice(package.name.utf8)))
                        try s.serialize(package.version)
                    }
                }
            }
            try s.appendConstructedNode(identifier: .set) { s in
                for digest in signatureDigests {
                    try s.serialize(ASN1OctetString(contentBytes: ArraySlice(digest)))
                }
            }
        }
        return s.serializedBytes
    }

    /// The DER KeyDescription.
    func derEncoded() throws -> [UInt8] {
        let applicationID = try applicationIDDER()
        let hardwareApplicationID = try applicationIDDER(packages: hardwarePackages)
        var s = DER.Serializer()
        try s.appendConstructedNode(identifier: .sequence) { s in
            try s.serialize(attestationVersion)
            try attestationSecurityLevel.serialize(into: &s, withIdentifier: .enumerated)
            try s.serialize(keyMintVersion)
            try keyMintSecurityLevel.serialize(into: &s, withIdentifier: .enumerated)
            try s.serialize(ASN1OctetString(contentBytes: ArraySlice(challenge)))
            try s.serialize(ASN1OctetString(contentBytes: ArraySlice(uniqueID)))
            try authorizationList(&s, applicationID: [.software, .both].contains(placement) ? applicationID : nil, hardware: false)
            try authorizationList(&s, applicationID: [.hardware, .both].contains(placement) ? hardwareApplicationID : nil, hardware: true)
        }
        return s.serializedBytes
    }

    private func authorizationList(_ s: inout DER.Serializer, applicationID: [UInt8]?, hardware: Bool) throws {
        try s.appendConstructedNode(identifier: .sequence) { s in
            if includeOtherFields && hardware {
                // [1] purpose SET OF INTEGER { sign, verify }, [2] algorithm EC, [3] keySize 256.
                try s.serialize(explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific) { s in
                    try s.appendConstructedNode(identifier: .set) { s in
                        try s.serialize(2)
                        try s.serialize(3)
                    }
                }
                try s.serialize(3, explicitlyTaggedWithTagNumber: 2, tagClass: .contextSpecific)
                try s.serialize(256, explicitlyTaggedWithTagNumber: 3, tagClass: .contextSpecific)
            }
            if hardware, let origin {
                try s.serialize(origin, explicitlyTaggedWithTagNumber: 702, tagClass: .contextSpecific)
            }
            if includeOtherFields && !hardware {
                // [701] creationDateTime.
                try s.serialize(1_700_000_000_000, explicitlyTaggedWithTagNumber: 701, tagClass: .contextSpecific)
            }
            if let applicationID {
                try s.serialize(
                    ASN1OctetString(contentBytes: ArraySlice(applicationID)),
                    explicitlyTaggedWithTagNumber: 709,
                    tagClass: .contextSpecific
                )
            }
            if includeRootOfTrust && hardware {
                // [704] rootOfTrust SEQUENCE { verifiedBootKey, deviceLocked, verifiedBootState, verifiedBootHash }.
                try s.serialize(explicitlyTaggedWithTagNumber: 704, tagClass: .contextSpecific) { s in
                    try s.appendConstructedNode(identifier: .sequence) { s in
                        try s.serialize(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 7, count: 32))))
                        try s.serialize(deviceLocked)
                        try verifiedBootState.serialize(into: &s, withIdentifier: .enumerated)
                        try s.serialize(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 9, count: 32))))
                    }
                }
            }
            if includeOtherFields && hardware {
                // [705] osVersion, [706] osPatchLevel.
                try s.serialize(160_000, explicitlyTaggedWithTagNumber: 705, tagClass: .contextSpecific)
                try s.serialize(202_602, explicitlyTaggedWithTagNumber: 706, tagClass: .contextSpecific)
            }
        }
    }
}
