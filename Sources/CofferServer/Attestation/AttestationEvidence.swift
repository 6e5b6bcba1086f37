import CofferAttestation
import Foundation
import Vapor

/// The attestation evidence a device sends with a key request (`attestation` in the body of
/// `POST /v1/device/keys/{key}`; docs/ATTESTATION.md).
///
/// The first request of an install attests (Apple: `keyID`, `challenge`, `attestationObject`;
/// Android: `challenge`, `certificateChain`); later ones assert (Apple: `keyID`, `assertion`;
/// Android: `keyID`, `signature`, `counter`).
struct AttestationEvidence: Content, Sendable {
    /// `apple-app-attest` or `android-key-attestation`.
    let format: String
    /// The attested key's identifier, base64 (32 bytes).
    let keyID: String?
    /// The challenge from `POST /v1/device/attestation/challenge`, base64, with an attestation.
    let challenge: String?
    /// Apple: the attestation object (CBOR), base64.
    let attestationObject: String?
    /// Apple: an assertion (CBOR), base64.
    let assertion: String?
    /// Android: the attestation certificate chain, DER base64 each, leaf first.
    let certificateChain: [String]?
    /// Android: the attested key's ECDSA signature (DER) over the key request's client data and the counter, base64.
    let signature: String?
    /// Android: the counter the signature covers; it must grow.
    let counter: Int64?

    /// The largest evidence field accepted, decoded (a real App Attest object with its receipt is about 5.5 KB).
    static let maximumFieldBytes = 32 * 1024
    /// The most certificates in an Android chain.
    static let maximumChainLength = 8

    /// Decodes a base64 field of at most ``maximumFieldBytes`` (checked on the text before decoding).
    static func bytes(_ text: String?, _ name: String) throws -> [UInt8] {
        guard let text else { throw DeviceAttestation.refusal(.invalid, "attestation.\(name) is missing") }
        guard text.utf8.count <= (maximumFieldBytes / 3 + 1) * 4, let data = Data(base64Encoded: text), !data.isEmpty else {
            throw DeviceAttestation.refusal(.invalid, "attestation.\(name) must be base64 of at most \(maximumFieldBytes) bytes")
        }
        return Array(data)
    }
}
