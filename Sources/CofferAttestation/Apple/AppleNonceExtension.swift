import SwiftASN1
import X509

/// The App Attest nonce extension of a credential certificate (OID 1.2.840.113635.100.8.2):
/// `SEQUENCE { [1] EXPLICIT OCTET STRING nonce }`.
enum AppleNonceExtension {
    /// The extension's OID.
    static let oid: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 8, 2]

    /// The nonce `certificate` carries; throws `.invalid` when the extension is absent or malformed.
    static func nonce(in certificate: Certificate) throws -> [UInt8] {
        guard let value = certificate.extensions[oid: oid]?.value else {
            throw AttestationFailure.invalid("credential certificate has no App Attest nonce extension")
        }
        do {
            // DER.parse bounds nesting itself; DER.sequence refuses elements after the tagged one.
            return try DER.sequence(try DER.parse(value), identifier: .sequence) { nodes in
                try DER.explicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { node in
                    Array(try ASN1OctetString(derEncoded: node).bytes)
                }
            }
        } catch {
            throw AttestationFailure.invalid("credential certificate's App Attest nonce extension is malformed")
        }
    }
}
