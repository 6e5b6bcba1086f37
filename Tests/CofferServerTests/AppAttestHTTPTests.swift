@testable import AttestationTestSupport
@testable import CofferServer
import CofferAttestation
import CofferFormat
import Crypto
import Fluent
import SQLKit
import Foundation
import Testing

/// Issue 17 over HTTP for `apple-app-attest`: a test authority stands in for Apple's App
/// Attestation CA (the server is started trusting it; its embedded root is Apple's), so every
/// check of the attestation and of later assertions is shown to refuse what it should.
@Suite("App Attest over HTTP")
struct AppAttestHTTPTests {
    struct Fixture {
        let server: TestServer
        let world: World
        let app: (id: String, credential: String)
        let key: ModelKey
        let authority: AppleTestAuthority

        static func make(_ backend: Backend = .sqlite) async throws -> Fixture {
            let authority = try AppleTestAuthority()
            let server = try await TestServer.start(postgres: backend.isPostgres) {
                $0.attestationRoots = DeviceAttestation.Roots(apple: [authority.root], android: [])
            }
            let world = World(server)
            try await world.team("T")
            let app = try await world.app(in: "T", name: "cam")
            let policy = AppleTestAuthority.policy
            let set = try await world.admin.call("PATCH", "/v1/teams/T/apps/\(app.id)", json: ["attestation": [
                "policy": "apple-app-attest", "appleTeamID": policy.teamID, "bundleID": policy.bundleID]])
            #expect(set.status == 200, "\(set.text)")
            let key = try await world.key(in: "T")
            try await world.release(key, in: "T", to: [app.id])
            return Fixture(server: server, world: world, app: app, key: key, authority: authority)
        }

        /// Certificates valid now (the authority's default is its own fixed time).
        static func knobs(_ adjust: (inout AppleTestAuthority.Knobs) -> Void = { _ in }) -> AppleTestAuthority.Knobs {
            var knobs = AppleTestAuthority.Knobs()
            knobs.notValidBefore = Date() - 3_600
            knobs.notValidAfter = Date() + 86_400
            adjust(&knobs)
            return knobs
        }

        func challenge() async throws -> [UInt8] { try await AttestationPolicyTests.challenge(for: app, on: server) }

        func attestation(for device: Device, attested: AppleTestAuthority.Device,
                         knobs: AppleTestAuthority.Knobs = Fixture.knobs(), challenge given: [UInt8]? = nil) async throws -> [String: Any] {
            var challenge = given ?? []
            if given == nil { challenge = try await self.challenge() }
            let clientData = AttestationClientData.attestation(challenge: challenge, devicePublicKey: Array(device.privateKey.publicKey.rawRepresentation))
            return ["format": "apple-app-attest", "keyID": Data(attested.keyID).base64EncodedString(),
                    "challenge": Data(challenge).base64EncodedString(),
                    "attestationObject": Data(try authority.attestation(device: attested, clientData: clientData, knobs: knobs)).base64EncodedString()]
        }

        func assertion(for device: Device, attested: AppleTestAuthority.Device, counter: UInt32, appID: String = AppleTestAuthority.policy.appID,
                       keyID: String? = nil) throws -> [String: Any] {
            let clientData = AttestationClientData.keyRequest(keyID: keyID ?? key.id, devicePublicKey: Array(device.privateKey.publicKey.rawRepresentation))
            let assertion = try AppleTestAuthority.assertion(device: attested, clientData: clientData, counter: counter, appID: appID)
            return ["format": "apple-app-attest", "keyID": Data(attested.keyID).base64EncodedString(), "assertion": Data(assertion).base64EncodedString()]
        }

        func request(_ device: Device, _ evidence: [String: Any]) async throws -> HTTP.Reply {
            try await AttestationPolicyTests.request(key.id, device: device, app: app, evidence: evidence, on: server)
        }
    }

    @Test("an attested install gets the key sealed to its device key, then assertions with a growing counter; replays are refused",
          arguments: Backend.allCases)
    func attestThenAssert(_ backend: Backend) async throws {
        guard !backend.isPostgres || TestServer.postgresURL != nil else { return }
        let fixture = try await Fixture.make(backend)
        defer { Task { try? await fixture.server.stop() } }
        let device = Device(), attested = AppleTestAuthority.Device()

        let refused = try await device.request(fixture.key.id, app: fixture.app, on: fixture.server)
        #expect(refused.errorCode == "attestation_required")
        #expect(refused.text.contains("attestation"))

        let evidence = try await fixture.attestation(for: device, attested: attested)
        let first = try await fixture.request(device, evidence)
        #expect(first.status == 200, "\(first.text)")
        #expect(try device.open(first, keyID: fixture.key.id) == fixture.key.key)
        #expect(try await fixture.request(device, evidence).errorCode == "attestation_challenge_invalid")

        let one = try fixture.assertion(for: device, attested: attested, counter: 1)
        let second = try await fixture.request(device, one)
        #expect(second.status == 200, "\(second.text)")
        #expect(try device.open(second, keyID: fixture.key.id) == fixture.key.key)
        #expect(try await fixture.request(device, one).errorCode == "assertion_replayed")
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 7)).status == 200)
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 3)).errorCode == "assertion_replayed")
        // An assertion for another key ID's request, and one for another App ID: refused.
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 8, keyID: "other")).errorCode
                == "attestation_invalid")
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 9, appID: "TEAMID1234.com.other"))
            .errorCode == "attestation_invalid")
        // The attested key is bound to its device key: sealed to another one, refused.
        let thief = Device()
        #expect(try await fixture.request(thief, try fixture.assertion(for: thief, attested: attested, counter: 10)).errorCode
                == "attestation_device_key_mismatch")
        // The same App Attest key attested twice (a second, valid attestation): refused.
        #expect(try await fixture.request(device, try await fixture.attestation(for: device, attested: attested)).errorCode == "attestation_invalid")

        try await fixture.server.app.refusals!.flush(on: fixture.server.app.db)
        let reasons = try await fixture.server.app.db.query(AuditRecord.self).filter(\.$outcome == "refused").all().compactMap(\.reason)
        #expect(Set(reasons).isSuperset(of: ["attestation_required", "assertion_replayed", "attestation_device_key_mismatch"]))
        let delivered = try await fixture.server.app.db.query(AuditRecord.self).filter(\.$outcome == "delivered").count()
        #expect(delivered == 3)
    }

    @Test("each check of the attestation refuses evidence that breaks it")
    func brokenAttestations() async throws {
        let fixture = try await Fixture.make()
        defer { Task { try? await fixture.server.stop() } }
        let device = Device()
        let stranger = try AppleTestAuthority(name: "Stranger")
        let cases: [(String, AppleTestAuthority.Knobs)] = [
            ("another App ID (RP ID)", Fixture.knobs { $0.appID = "TEAMID1234.com.example.other" }),
            ("a nonce over other client data", Fixture.knobs { $0.nonceClientData = Array("other".utf8) }),
            ("the development environment for a production app", Fixture.knobs { $0.aaguid = AppleAppAttestPolicy.Environment.development.aaguid }),
            ("a counter that is not 0", Fixture.knobs { $0.counter = 1 }),
            ("a credential ID that is not the key ID", Fixture.knobs { $0.credentialID = Array(repeating: 7, count: 32) }),
            ("a chain to another CA", Fixture.knobs { $0.issuer = stranger }),
            ("a chain without its intermediate", Fixture.knobs { $0.includeIntermediate = false }),
            ("an expired credential certificate", Fixture.knobs { $0.notValidBefore = Date() - 7_200; $0.notValidAfter = Date() - 3_600 }),
            ("another format", Fixture.knobs { $0.fmt = "packed" }),
        ]
        for (name, knobs) in cases {
            let reply = try await fixture.request(device, try await fixture.attestation(for: device, attested: AppleTestAuthority.Device(), knobs: knobs))
            #expect(reply.status == 403, "\(name)")
            #expect(reply.errorCode == "attestation_invalid", "\(name): \(reply.text)")
        }
        // An expired challenge (issued more than five minutes ago) is refused, and so is a challenge
        // with any byte changed (its time, its random part, its MAC).
        let challenges = try #require(fixture.server.app.attestationChallenges)
        let appID = try #require(UUID(uuidString: fixture.app.id))
        let old = challenges.issue(for: appID, now: Date() - AttestationChallenges.lifetime - 2).challenge
        var expired = try await fixture.attestation(for: device, attested: AppleTestAuthority.Device(), challenge: old)
        #expect(try await fixture.request(device, expired).errorCode == "attestation_challenge_invalid")
        for index in [0, 3, 4, 11, 12, 31] {
            var altered = challenges.issue(for: appID).challenge
            altered[index] ^= 0x01
            let forged = try await fixture.attestation(for: device, attested: AppleTestAuthority.Device(), challenge: altered)
            #expect(try await fixture.request(device, forged).errorCode == "attestation_challenge_invalid", "byte \(index)")
        }
        expired["challenge"] = nil
        #expect(try await fixture.request(device, expired).errorCode == "attestation_invalid")
        // The key ID must be the hash of the attested key.
        var mismatched = try await fixture.attestation(for: device, attested: AppleTestAuthority.Device())
        mismatched["keyID"] = Data(AppleTestAuthority.Device().keyID).base64EncodedString()
        #expect(try await fixture.request(device, mismatched).errorCode == "attestation_invalid")
        // An attestation made for another device key is not delivered to this one.
        let other = Device()
        let forOther = try await fixture.attestation(for: other, attested: AppleTestAuthority.Device())
        #expect(try await fixture.request(device, forOther).errorCode == "attestation_invalid")
        #expect(try await AttestedDeviceRecord.query(on: fixture.server.app.db).count() == 0)
    }

    @Test("the server's own roots are Apple's: the test authority's evidence is refused without the test configuration")
    func embeddedRootRefusesTestEvidence() async throws {
        let authority = try AppleTestAuthority()
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        #expect(server.configuration.attestationRoots == nil)
        let world = World(server)
        try await world.team("T")
        let app = try await world.app(in: "T")
        let policy = AppleTestAuthority.policy
        #expect(try await world.admin.call("PATCH", "/v1/teams/T/apps/\(app.id)", json: ["attestation": [
            "policy": "apple-app-attest", "appleTeamID": policy.teamID, "bundleID": policy.bundleID]]).status == 200)
        let key = try await world.key(in: "T")
        try await world.release(key, in: "T", to: [app.id])
        let fixture = Fixture(server: server, world: world, app: app, key: key, authority: authority)
        let device = Device()
        let reply = try await fixture.request(device, try await fixture.attestation(for: device, attested: AppleTestAuthority.Device()))
        #expect(reply.errorCode == "attestation_invalid", "\(reply.text)")
    }
}
