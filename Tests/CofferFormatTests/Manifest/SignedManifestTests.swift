import CofferFormat
import Crypto
import Foundation
import Testing

@Suite("Signed manifests")
struct SignedManifestTests {
    static let key = try! Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 7, count: 32))
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    static func manifest(models: Int = 2, expires: TimeInterval = 3600) -> Manifest {
        var entries: [String: Manifest.Entry] = [:]
        for index in 0..<models {
            entries["Model\(index)"] = .init(versionID: "v\(index)", sha256: String(repeating: "ab", count: 32), size: 10,
                                             url: "/v1/blobs/" + String(repeating: "ab", count: 32), keyID: "k")
        }
        return Manifest(collection: "FlowerModels", teamID: "t", deploymentID: "d", sequence: 3, target: "default",
                        issuedAt: now, expiresAt: now.addingTimeInterval(expires), models: entries)
    }

    /// An envelope around arbitrary payload bytes, signed with the test key.
    static func envelope(payload: Data, type: String = SignedManifest.payloadType) throws -> Data {
        let signature = try key.signature(for: SignedManifest.preAuthenticationEncoding(payloadType: type, payload: payload))
        return try JSONSerialization.data(withJSONObject: [
            "payloadType": type, "payload": payload.base64EncodedString(),
            "signatures": [["keyid": "x", "sig": signature.base64EncodedString()]],
        ])
    }

    @Test("PAE is DSSE's: lengths in decimal, single spaces")
    func preAuthenticationEncoding() {
        let encoded = SignedManifest.preAuthenticationEncoding(payloadType: "application/vnd.coffer.manifest+json", payload: Data("{}".utf8))
        #expect(String(decoding: encoded, as: UTF8.self) == "DSSEv1 36 application/vnd.coffer.manifest+json 2 {}")
    }

    @Test("round trip; the payload is canonical (sorted keys, RFC 3339 times, same bytes every time)")
    func roundTrip() throws {
        let manifest = Self.manifest()
        let envelope = try SignedManifest.sign(manifest, with: Self.key)
        #expect(try SignedManifest.verify(envelope, using: Self.key.publicKey, now: Self.now) == manifest)
        let payload = try manifest.canonicalPayload()
        #expect(payload == (try manifest.canonicalPayload()))
        let text = String(decoding: payload, as: UTF8.self)
        #expect(text.hasPrefix("{\"collection\":\"FlowerModels\",\"deploymentID\":\"d\",\"expiresAt\":\"2026-09-21T"))
        #expect(!text.contains(" ") && !text.contains("\\/"))
        #expect(SignedManifest.keyID(of: Self.key.publicKey).count == 16)
    }

    @Test("refused: another key, any changed byte, expired, other payload types, malformed payloads")
    func refusals() throws {
        let envelope = try SignedManifest.sign(Self.manifest(), with: Self.key)
        let other = Curve25519.Signing.PrivateKey().publicKey
        #expect(throws: ManifestError.badSignature) { try SignedManifest.verify(envelope, using: other, now: Self.now) }
        #expect(throws: ManifestError.expired) { try SignedManifest.verify(envelope, using: Self.key.publicKey, now: Self.now.addingTimeInterval(3600)) }

        // Every flipped bit of the payload is refused (as a bad signature, or as not an envelope).
        let object = try #require(try JSONSerialization.jsonObject(with: envelope) as? [String: Any])
        let payload = try #require(Data(base64Encoded: object["payload"] as? String ?? ""))
        for index in stride(from: 0, to: payload.count, by: 7) {
            var changed = payload
            changed[index] ^= 0x01
            var copy = object
            copy["payload"] = changed.base64EncodedString()
            let tampered = try JSONSerialization.data(withJSONObject: copy)
            #expect(throws: ManifestError.badSignature) { try SignedManifest.verify(tampered, using: Self.key.publicKey, now: Self.now) }
        }
        let foreignType = try Self.envelope(payload: try Self.manifest().canonicalPayload(), type: "application/json")
        #expect(throws: ManifestError.self) { try SignedManifest.verify(foreignType, using: Self.key.publicKey, now: Self.now) }

        var future = Self.manifest()
        future.format = 2
        #expect(throws: ManifestError.unsupportedFormat(2)) {
            try SignedManifest.verify(try Self.envelope(payload: try future.canonicalPayload()), using: Self.key.publicKey, now: Self.now)
        }
        var badHash = Self.manifest()
        badHash.models["Model0"]?.sha256 = "AB"
        #expect(throws: ManifestError.self) {
            try SignedManifest.verify(try Self.envelope(payload: try badHash.canonicalPayload()), using: Self.key.publicKey, now: Self.now)
        }
        let tooMany = Self.manifest(models: Manifest.maximumModels + 1)
        #expect(throws: ManifestError.malformed("more than 1000 models")) {
            try SignedManifest.verify(try Self.envelope(payload: try tooMany.canonicalPayload()), using: Self.key.publicKey, now: Self.now)
        }
        for garbage in [Data(), Data("{}".utf8), Data("[1,2]".utf8), Data(repeating: 0x7b, count: SignedManifest.maximumEnvelopeSize + 1)] {
            #expect(throws: ManifestError.self) { try SignedManifest.verify(garbage, using: Self.key.publicKey, now: Self.now) }
        }
        #expect(throws: ManifestError.malformed("the signed payload is not a manifest")) {
            try SignedManifest.verify(try Self.envelope(payload: Data("not json".utf8)), using: Self.key.publicKey, now: Self.now)
        }
    }

    /// Whether `text` holds a control character (C0, DEL, C1), a line separator, or a format
    /// character these tests use.
    static func hasUnprintable(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            let value: UInt32 = scalar.value
            return value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x200B || value == 0x202E || value == 0x2028
        }
    }

    @Test("a foreign payload type, read before the signature is checked, is named without control or format characters, 80 at most")
    func foreignPayloadTypeIsPrintable() throws {
        let shown = "text/plain[31mINFO model verified"
        let hostile = "text/plain\u{1B}[31m\r\nINFO model verified\u{202E}\u{85}\u{2028}\u{200B}" + String(repeating: "y", count: 200)
        let envelope = try Self.envelope(payload: try Self.manifest().canonicalPayload(), type: hostile)
        do {
            _ = try SignedManifest.verify(envelope, using: Self.key.publicKey, now: Self.now)
            Issue.record("a foreign payload type was accepted")
        } catch {
            let text = error.description
            #expect(text.hasPrefix("the manifest is malformed: payload type " + shown), "\(text.debugDescription)")
            #expect(!Self.hasUnprintable(text), "\(text.debugDescription)")
            // 80 scalars of what remains once they are removed.
            #expect(text.hasSuffix(shown + String(repeating: "y", count: 80 - shown.unicodeScalars.count) + " is not a Coffer manifest"))
        }
    }

    @Test("mutations of a valid envelope never crash and are refused unless unchanged")
    func mutations() throws {
        let envelope = [UInt8](try SignedManifest.sign(Self.manifest(), with: Self.key))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var mutated = envelope
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            case 1: mutated.removeSubrange(Int.random(in: 0..<mutated.count, using: &generator)...)
            default: mutated.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0..<mutated.count, using: &generator))
            }
            do {
                let manifest = try SignedManifest.verify(Data(mutated), using: Self.key.publicKey, now: Self.now)
                // Only a change outside what is signed (JSON white space, key order) may pass.
                #expect(manifest == Self.manifest())
            } catch {
                #expect(!error.description.isEmpty, "typed throws: always a ManifestError with one line")
            }
        }
    }
}
