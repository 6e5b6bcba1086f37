import CofferFormat
import Crypto
import Foundation
import Testing
@testable import Coffer

/// What a verified manifest must agree with before the cache switches to it (``ManifestTrust``).
@Suite("Manifest trust")
struct ManifestTrustTests {
    static let team = "5c1d3a52-0d39-4a5e-8f43-1e0f4f2a9b11", other = "9e2b4c61-7a8d-4f10-b2c3-d4e5f6a7b8c9"

    static func manifest(team: String = team, collection: String = "FlowerModels", deployment: String = "d1", sequence: UInt64 = 3,
                         target: String = "default", issued: Date = Date(timeIntervalSince1970: 1_000_000),
                         models: [String: Manifest.Entry] = ["Classifier": entry("aa")]) -> Manifest {
        Manifest(collection: collection, teamID: team, deploymentID: deployment, sequence: sequence, target: target,
                 issuedAt: issued, expiresAt: issued.addingTimeInterval(3600), models: models)
    }

    static func entry(_ sha: String, url: String = "/v1/blobs/x", size: Int64 = 10) -> Manifest.Entry {
        Manifest.Entry(versionID: "v-" + sha, sha256: sha, size: size, url: url, keyID: "k")
    }

    static func refusal(_ next: Manifest, trusted: Manifest?, configured: String? = nil) -> String? {
        ManifestTrust.refusal(of: next, collection: "FlowerModels", configuredTeamID: configured, trusted: trusted)
    }

    @Test("the team: configured, else the first seen; compared without regard to case")
    func team() {
        #expect(Self.refusal(Self.manifest(), trusted: nil) == nil, "trust on first use")
        #expect(Self.refusal(Self.manifest(), trusted: nil, configured: Self.team.uppercased()) == nil)
        #expect(Self.refusal(Self.manifest(team: Self.other), trusted: nil, configured: Self.team)?.contains("configured") == true)
        #expect(Self.refusal(Self.manifest(team: Self.other, sequence: 9), trusted: Self.manifest())?.contains("first trusted") == true)
        #expect(Self.refusal(Self.manifest(collection: "Other"), trusted: nil)?.contains("collection") == true)
    }

    @Test("a manifest of a foreign payload type is refused; the app's refusal carries no control or format character of it")
    func foreignPayloadType() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-payload-type-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = ScriptedManifests()
        var configuration = CofferConfiguration(serverURL: URL(string: "http://127.0.0.1:9")!, appID: UUID().uuidString,
                                                credential: "c", publicKey: ManifestTimeTests.key.publicKey, cacheDirectory: folder)
        configuration.transport = server
        configuration.updatePolicy = .waitForLatest
        configuration.deviceID = "device-1"
        // Unsigned: the payload type is read, and refused, before any signature is checked. Written
        // into an app's log as it was, it would clear the screen and forge a line of its own.
        let hostile = "text/plain\u{1B}[2J\r\n2026-01-01 INFO model verified\u{202E}\u{85}\u{2028}" + String(repeating: "x", count: 200)
        let envelope = try JSONSerialization.data(withJSONObject: [
            "payloadType": hostile, "payload": Data("{}".utf8).base64EncodedString(), "signatures": [[String: String]](),
        ])
        server.answer(.envelope(envelope, etag: "\"e\""))
        let client = try CofferClient(configuration: configuration)
        let error = await #expect(throws: CofferError.self) { try await client.beginAccessing(identifier: "FlowerModels") }
        guard case .collectionUnavailable(_, .manifestRefused(let reason)) = error else {
            Issue.record("expected a refused manifest, got \(String(describing: error))")
            return
        }
        let shown = "text/plain[2J2026-01-01 INFO model verified"
        #expect(reason.contains("payload type " + shown + String(repeating: "x", count: 80 - shown.unicodeScalars.count) + " is not a Coffer manifest"),
                "\(reason.debugDescription)")
        let unprintable = reason.unicodeScalars.contains { scalar in
            let value: UInt32 = scalar.value
            return value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x202E || value == 0x2028
        }
        #expect(!unprintable, "\(reason.debugDescription)")
    }

    @Test("the same sequence: re-signed, another URL or another target of the same deployment are accepted; other content is refused")
    func sameSequence() {
        let trusted = Self.manifest()
        #expect(Self.refusal(Self.manifest(issued: Date(timeIntervalSince1970: 2_000_000)), trusted: trusted) == nil, "re-signed")
        #expect(Self.refusal(Self.manifest(models: ["Classifier": Self.entry("aa", url: "https://cdn/x")]), trusted: trusted) == nil)
        #expect(Self.refusal(Self.manifest(target: "rule 1", models: ["Classifier": Self.entry("bb")]), trusted: trusted) == nil,
                "the device now matches another rule of the same activation")
        #expect(Self.refusal(Self.manifest(deployment: "d2"), trusted: trusted)?.contains("another deployment") == true)
        #expect(Self.refusal(Self.manifest(models: ["Classifier": Self.entry("bb")]), trusted: trusted)?.contains("other models") == true)
        #expect(Self.refusal(Self.manifest(models: ["Classifier": Self.entry("aa", size: 11)]), trusted: trusted) != nil)
        #expect(Self.refusal(Self.manifest(models: [:]), trusted: trusted) != nil)
        #expect(Self.refusal(Self.manifest(sequence: 2), trusted: trusted)?.contains("older") == true)
        #expect(Self.refusal(Self.manifest(deployment: "d2", sequence: 4, models: [:]), trusted: trusted) == nil)
    }
}
