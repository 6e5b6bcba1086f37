#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// A manifest in its signed envelope: DSSE (Dead Simple Signing Envelope) with Ed25519.
///
/// ```json
/// {"payloadType":"application/vnd.coffer.manifest+json","payload":"<base64>",
///  "signatures":[{"keyid":"<16 hex>","sig":"<base64>"}]}
/// ```
/// The signature covers `PAE(payloadType, payload)` (see ``preAuthenticationEncoding(payloadType:payload:)``),
/// so a verifier checks the payload bytes exactly as received and never re-encodes JSON.
public enum SignedManifest {
    /// The DSSE payload type of a Coffer manifest.
    public static let payloadType = "application/vnd.coffer.manifest+json"
    /// The largest envelope a verifier reads, in bytes: checked before parsing.
    public static let maximumEnvelopeSize = 1 << 20

    struct Envelope: Codable {
        var payloadType: String
        var payload: String
        var signatures: [Signature]
    }

    struct Signature: Codable {
        var keyid: String
        var sig: String
    }

    /// DSSE's pre-authentication encoding: `"DSSEv1" SP len(type) SP type SP len(payload) SP payload`,
    /// lengths in ASCII decimal.
    public static func preAuthenticationEncoding(payloadType: String, payload: Data) -> Data {
        var encoded = Data("DSSEv1 \(payloadType.utf8.count) \(payloadType) \(payload.count) ".utf8)
        encoded.append(payload)
        return encoded
    }

    /// The ID of a signing key: the first 16 hex digits of SHA-256 of its raw 32 bytes.
    public static func keyID(of publicKey: Curve25519.Signing.PublicKey) -> String {
        String(SHA256.hash(data: publicKey.rawRepresentation).hexString.prefix(16))
    }

    /// Signs `manifest`'s canonical payload; returns the envelope's bytes (compact JSON, keys sorted).
    public static func sign(_ manifest: Manifest, with key: Curve25519.Signing.PrivateKey) throws -> Data {
        let payload = try manifest.canonicalPayload()
        let signature = try key.signature(for: preAuthenticationEncoding(payloadType: payloadType, payload: payload))
        let envelope = Envelope(
            payloadType: payloadType, payload: payload.base64EncodedString(),
            signatures: [Signature(keyid: keyID(of: key.publicKey), sig: signature.base64EncodedString())])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(envelope)
    }

    /// Verifies an envelope with the pinned public key, then decodes and checks the manifest.
    ///
    /// Refuses, in this order: oversized or malformed envelopes, a payload type other than Coffer's,
    /// no signature that verifies with `publicKey`, a malformed payload, and — when `now` is given —
    /// an expired manifest. The caller compares ``Manifest/sequence`` with the one it trusts.
    public static func verify(
        _ envelopeBytes: Data, using publicKey: Curve25519.Signing.PublicKey, now: Date? = Date()
    ) throws(ManifestError) -> Manifest {
        guard envelopeBytes.count <= maximumEnvelopeSize else { throw .malformed("larger than \(maximumEnvelopeSize) bytes") }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: envelopeBytes) else {
            throw .malformed("not a signed envelope")
        }
        guard envelope.payloadType == payloadType else {
            // Not yet verified, and headed for messages apps log: no control or format characters.
            throw .malformed("payload type \(PrintableText.sanitized(envelope.payloadType, limit: 80)) is not a Coffer manifest")
        }
        guard let payload = Data(base64Encoded: envelope.payload) else { throw .malformed("the payload is not base64") }
        guard envelope.signatures.count <= 16 else { throw .malformed("more than 16 signatures") }
        let signed = preAuthenticationEncoding(payloadType: envelope.payloadType, payload: payload)
        let verified = envelope.signatures.contains { signature in
            guard let bytes = Data(base64Encoded: signature.sig) else { return false }
            return publicKey.isValidSignature(bytes, for: signed)
        }
        guard verified else { throw .badSignature }
        let manifest = try Manifest.decode(payload: payload)
        if let now, manifest.expiresAt <= now { throw .expired }
        return manifest
    }
}
