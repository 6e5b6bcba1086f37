@testable import AttestationTestSupport
@testable import CofferServer
import CofferAttestation
import CofferFormat
import Crypto
import Fluent
import SQLKit
import Foundation
import Testing
import X509

/// Issue 17 over HTTP for `android-key-attestation`: a test authority (never the server's roots)
/// issues key attestation chains; the server, started trusting it, delivers a key only to an
/// attested install and only sealed to the device key the attestation vouched for.
@Suite("Android key attestation over HTTP")
struct AndroidAttestationHTTPTests {
    /// A server trusting `authority`, a team with an app of the Android policy and a released key.
    struct Fixture {
        let server: TestServer
        let world: World
        let app: (id: String, credential: String)
        let key: ModelKey
        let authority: AndroidTestAuthority

        static func make(_ backend: Backend = .sqlite, configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in }) async throws -> Fixture {
            let authority = try AndroidTestAuthority()
            let server = try await TestServer.start(postgres: backend.isPostgres) {
                $0.attestationRoots = DeviceAttestation.Roots(apple: [], android: [authority.root])
                configure(&$0)
            }
            let world = World(server)
            try await world.team("T")
            let app = try await world.app(in: "T", name: "droid")
            let policy: [String: Any] = [
                "policy": "android-key-attestation", "packageName": AndroidTestKeyDescription.packageName,
                "signingCertificateDigests": [AndroidTestKeyDescription.signingDigest.hexString], "minimumSecurityLevel": "tee",
            ]
            let set = try await world.admin.call("PATCH", "/v1/teams/T/apps/\(app.id)", json: ["attestation": policy])
            #expect(set.status == 200, "\(set.text)")
            let key = try await world.key(in: "T")
            try await world.release(key, in: "T", to: [app.id])
            return Fixture(server: server, world: world, app: app, key: key, authority: authority)
        }

        func challenge() async throws -> [UInt8] { try await AttestationPolicyTests.challenge(for: app, on: server) }

        /// An attestation of a new key for `device` over a fresh challenge, with `adjust` applied to the KeyDescription.
        func attestation(for device: Device, attested: P256.Signing.PrivateKey, challenge given: [UInt8]? = nil,
                         adjust: (inout AndroidTestKeyDescription) -> Void = { _ in }) async throws -> [String: Any] {
            var challenge = given ?? []
            if given == nil { challenge = try await self.challenge() }
            let clientData = AttestationClientData.attestation(challenge: challenge, devicePublicKey: Array(device.privateKey.publicKey.rawRepresentation))
            var description = AndroidTestKeyDescription(challenge: Array(SHA256.hash(data: clientData)))
            adjust(&description)
            let leaf = try authority.leaf(keyDescription: try description.derEncoded(), publicKey: Certificate.PublicKey(attested.publicKey))
            return ["format": "android-key-attestation", "challenge": Data(challenge).base64EncodedString(),
                    "certificateChain": try authority.chain(leaf: leaf).map { Data($0).base64EncodedString() }]
        }

        /// A signed request for the fixture's key by `attested`, with `counter`.
        func assertion(for device: Device, attested: P256.Signing.PrivateKey, counter: UInt32) throws -> [String: Any] {
            let clientData = AttestationClientData.keyRequest(keyID: key.id, devicePublicKey: Array(device.privateKey.publicKey.rawRepresentation))
            let big = withUnsafeBytes(of: counter.bigEndian) { Array($0) }
            let signature = try attested.signature(for: clientData + big).derRepresentation
            return ["format": "android-key-attestation", "keyID": Data(SHA256.hash(data: attested.publicKey.x963Representation)).base64EncodedString(),
                    "signature": signature.base64EncodedString(), "counter": Int(counter)]
        }

        func request(_ device: Device, _ evidence: [String: Any]) async throws -> HTTP.Reply {
            try await AttestationPolicyTests.request(key.id, device: device, app: app, evidence: evidence, on: server)
        }

        /// A key request from `address` (forwarded by the trusted proxy), with `evidence` or none.
        func request(_ device: Device, _ evidence: [String: Any]?, from address: String) async throws -> HTTP.Reply {
            var body: [String: Any] = ["appID": app.id, "credential": app.credential, "deviceID": device.id,
                                       "devicePublicKey": device.privateKey.publicKey.rawRepresentation.base64EncodedString()]
            body["attestation"] = evidence
            return try await HTTP(base: server.base).call("POST", "/v1/device/keys/\(key.id)", json: body, headers: ["X-Forwarded-For": address])
        }
    }

    @Test("an attested install gets the key sealed to its device key; assertions with growing counters too; replays refused", arguments: Backend.allCases)
    func attestThenAssert(_ backend: Backend) async throws {
        guard !backend.isPostgres || TestServer.postgresURL != nil else { return }
        let fixture = try await Fixture.make(backend)
        defer { Task { try? await fixture.server.stop() } }
        let device = Device(), attested = P256.Signing.PrivateKey()

        // Without evidence: refused.
        #expect(try await device.request(fixture.key.id, app: fixture.app, on: fixture.server).errorCode == "attestation_required")
        let evidence = try await fixture.attestation(for: device, attested: attested)
        let first = try await fixture.request(device, evidence)
        #expect(first.status == 200, "\(first.text)")
        #expect(try device.open(first, keyID: fixture.key.id) == fixture.key.key)
        // The same attestation again: its challenge is used up.
        #expect(try await fixture.request(device, evidence).errorCode == "attestation_challenge_invalid")

        let one = try fixture.assertion(for: device, attested: attested, counter: 1)
        let second = try await fixture.request(device, one)
        #expect(second.status == 200, "\(second.text)")
        #expect(try device.open(second, keyID: fixture.key.id) == fixture.key.key)
        #expect(try await fixture.request(device, one).errorCode == "assertion_replayed")
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 2)).status == 200)
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 2)).errorCode == "assertion_replayed")

        // Another device key with the attested key's assertion: the key is not sealed to it.
        let thief = Device()
        #expect(try await fixture.request(thief, try fixture.assertion(for: thief, attested: attested, counter: 9)).errorCode
                == "attestation_device_key_mismatch")
        // A key nobody attested signing for this device.
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: P256.Signing.PrivateKey(), counter: 5)).errorCode
                == "attestation_unknown_key")
        // The recorded row keeps the device key it vouched for and the last counter.
        let row = try #require(try await AttestedDeviceRecord.query(on: fixture.server.app.db).first())
        #expect(row.counter == 2)
        #expect(row.devicePublicKey == device.privateKey.publicKey.rawRepresentation.base64EncodedString())
        let metrics = String(decoding: try await HTTP(base: fixture.server.base).call("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("coffer_attestations_total{format=\"android-key-attestation\",outcome=\"attested\"} 1"))
        #expect(metrics.contains("coffer_attestations_total{format=\"android-key-attestation\",outcome=\"asserted\"} 2"))
    }

    @Test("a changed policy forgets the installs attested under the old one; the same policy again forgets nothing")
    func policyChangeForgetsInstalls() async throws {
        let fixture = try await Fixture.make()
        defer { Task { try? await fixture.server.stop() } }
        let device = Device(), attested = P256.Signing.PrivateKey()
        #expect(try await fixture.request(device, try await fixture.attestation(for: device, attested: attested)).status == 200)
        let path = "/v1/teams/T/apps/\(fixture.app.id)"
        let policy: [String: Any] = [
            "policy": "android-key-attestation", "packageName": AndroidTestKeyDescription.packageName,
            "signingCertificateDigests": [AndroidTestKeyDescription.signingDigest.hexString], "minimumSecurityLevel": "tee",
        ]
        // The same policy again: the install keeps asserting.
        #expect(try await fixture.world.admin.call("PATCH", path, json: ["attestation": policy]).status == 200)
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 1)).status == 200)

        // The app's signing key leaked: the team lists only a new digest. The install attested under
        // the old digest is forgotten, and cannot attest again with the old signature.
        var tightened = policy
        tightened["signingCertificateDigests"] = [Array(SHA256.hash(data: Array("new signing key".utf8))).hexString]
        #expect(try await fixture.world.admin.call("PATCH", path, json: ["attestation": tightened]).status == 200)
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 2)).errorCode
                == "attestation_unknown_key")
        #expect(try await fixture.request(device, try await fixture.attestation(for: device, attested: attested)).errorCode == "attestation_invalid")
        #expect(try await AttestedDeviceRecord.query(on: fixture.server.app.db).count() == 0)
    }

    @Test("each field of the evidence that differs from the policy is refused, and the challenge is not reusable")
    func brokenFields() async throws {
        let fixture = try await Fixture.make()
        defer { Task { try? await fixture.server.stop() } }
        let device = Device()
        let cases: [(String, (inout AndroidTestKeyDescription) -> Void)] = [
            ("another package", { $0.packages = [("com.example.other", 1)] }),
            ("another signing certificate", { $0.signatureDigests = [Array(SHA256.hash(data: Array("other".utf8)))] }),
            ("a software key under a tee policy", { $0.attestationSecurityLevel = 0; $0.keyMintSecurityLevel = 0 }),
            ("a challenge over other client data", { $0.challenge = Array(SHA256.hash(data: Array("other".utf8))) }),
            ("a device with an unlocked bootloader", { $0.deviceLocked = false }),
            ("a device whose boot is not verified", { $0.verifiedBootState = 2 }),
            ("a key imported into the device", { $0.origin = 2 }),
        ]
        for (name, adjust) in cases {
            let reply = try await fixture.request(device, try await fixture.attestation(for: device, attested: P256.Signing.PrivateKey(), adjust: adjust))
            #expect(reply.status == 403, "\(name)")
            #expect(reply.errorCode == "attestation_invalid", "\(name): \(reply.text)")
        }
        // A chain from an authority the server does not trust.
        let stranger = try AndroidTestAuthority(name: "Stranger")
        let challenge = try await fixture.challenge()
        let clientData = AttestationClientData.attestation(challenge: challenge, devicePublicKey: Array(device.privateKey.publicKey.rawRepresentation))
        let leaf = try stranger.leaf(keyDescription: try AndroidTestKeyDescription(challenge: Array(SHA256.hash(data: clientData))).derEncoded(),
                                     publicKey: Certificate.PublicKey(P256.Signing.PrivateKey().publicKey))
        let untrusted = try await fixture.request(device, [
            "format": "android-key-attestation", "challenge": Data(challenge).base64EncodedString(),
            "certificateChain": try stranger.chain(leaf: leaf).map { Data($0).base64EncodedString() }])
        #expect(untrusted.errorCode == "attestation_invalid")
        // A challenge issued to another app of the same team is refused.
        let other = try await fixture.world.app(in: "T", name: "other")
        #expect(try await fixture.world.admin.call("PATCH", "/v1/teams/T/apps/\(other.id)",
                                                   json: ["attestation": AttestationPolicyTests.android]).status == 200)
        let foreignChallenge = try await AttestationPolicyTests.challenge(for: other, on: fixture.server)
        let stolen = try await fixture.attestation(for: device, attested: P256.Signing.PrivateKey(), challenge: foreignChallenge)
        #expect(try await fixture.request(device, stolen).errorCode == "attestation_challenge_invalid")
        // No key was recorded by any refusal.
        #expect(try await AttestedDeviceRecord.query(on: fixture.server.app.db).count() == 0)
    }

    @Test("allowUnlockedDevices lets an unlocked device attest; the policy and app list say so; taking it back forgets the install")
    func unlockedDevices() async throws {
        let fixture = try await Fixture.make()
        defer { Task { try? await fixture.server.stop() } }
        let device = Device(), attested = P256.Signing.PrivateKey()
        let unlocked = { (description: inout AndroidTestKeyDescription) in description.deviceLocked = false; description.verifiedBootState = 2 }
        #expect(try await fixture.request(device, try await fixture.attestation(for: device, attested: attested, adjust: unlocked)).errorCode
                == "attestation_invalid")
        let path = "/v1/teams/T/apps/\(fixture.app.id)"
        var policy: [String: Any] = [
            "policy": "android-key-attestation", "packageName": AndroidTestKeyDescription.packageName,
            "signingCertificateDigests": [AndroidTestKeyDescription.signingDigest.hexString], "allowUnlockedDevices": true,
        ]
        let set = try await fixture.world.admin.call("PATCH", path, json: ["attestation": policy])
        #expect(set.status == 200, "\(set.text)")
        #expect(set.text.contains("\"allowUnlockedDevices\":true"), "\(set.text)")
        #expect(try await fixture.request(device, try await fixture.attestation(for: device, attested: attested, adjust: unlocked)).status == 200)
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 1)).status == 200)
        // Back to the default: the install attested from the unlocked device is forgotten.
        policy["allowUnlockedDevices"] = false
        #expect(try await fixture.world.admin.call("PATCH", path, json: ["attestation": policy]).status == 200)
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 2)).errorCode
                == "attestation_unknown_key")

        // The dashboard's box sets it too, and shows it set.
        let owner = try await DashboardTests.ownerBrowser(fixture.server)
        _ = try await owner.get("/dashboard/teams/T/apps")
        let form = try await owner.post("/dashboard/teams/T/apps/\(fixture.app.id)/attestation", [
            "policy": "android-key-attestation", "packageName": AndroidTestKeyDescription.packageName,
            "digests": AndroidTestKeyDescription.signingDigest.hexString, "securityLevel": "tee", "allowUnlocked": "on",
            "password": DashboardTests.password,
        ])
        #expect(form.status == 303, "\(form.html)")
        let row = try #require(try await AppRecord.find(UUID(uuidString: fixture.app.id), on: fixture.server.app.db))
        #expect(try AttestationSettings.stored(row.attestation).allowUnlockedDevices == true)
        #expect(try await owner.get("/dashboard/teams/T/apps").html.contains("name=\"allowUnlocked\" checked"))
    }

    @Test("one extracted credential cannot spend an attesting app's budget: requests without or with bad evidence cost only their address")
    func credentialAloneCannotStarveTheApp() async throws {
        let fixture = try await Fixture.make {
            $0.deliveriesPerAppPerMinute = 5
            $0.authFailuresPerAddressPerMinute = 8
            $0.trustedProxies = "127.0.0.1, ::1"
        }
        defer { Task { try? await fixture.server.stop() } }
        // The attacker has the credential (it ships in the app) and no genuine install.
        var codes: [String] = []
        for _ in 0..<6 {
            codes.append(try await fixture.request(Device(), nil, from: "203.0.113.9").errorCode ?? "none")
        }
        for counter in 1...2 {
            let thief = Device()
            let forged = try fixture.assertion(for: thief, attested: P256.Signing.PrivateKey(), counter: UInt32(counter))
            codes.append(try await fixture.request(thief, forged, from: "203.0.113.9").errorCode ?? "none")
        }
        #expect(codes == Array(repeating: "attestation_required", count: 6) + ["attestation_unknown_key", "attestation_unknown_key"], "\(codes)")
        // Eight failures: that address is refused now, before any look-up.
        #expect(try await fixture.request(Device(), nil, from: "203.0.113.9").status == 429)

        // A genuine install elsewhere gets its key, and the app's budget (5) counts only delivered keys.
        let device = Device(), attested = P256.Signing.PrivateKey()
        let first = try await fixture.request(device, try await fixture.attestation(for: device, attested: attested), from: "198.51.100.1")
        #expect(first.status == 200, "\(first.text)")
        var statuses: [Int] = []
        for counter in 1...5 {
            statuses.append(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: UInt32(counter)),
                                                      from: "198.51.100.\(counter + 1)").status)
        }
        #expect(statuses == [200, 200, 200, 200, 429], "\(statuses)")
    }

    @Test("an attestation checked under the policy before a change and recorded after the change is no install under the new one")
    func attestationRacingAPolicyChange() async throws {
        let fixture = try await Fixture.make()
        defer { Task { try? await fixture.server.stop() } }
        let db = fixture.server.app.db
        let appID = try #require(UUID(uuidString: fixture.app.id))
        let before = try AttestationSettings.stored(try #require(try await AppRecord.find(appID, on: db)).attestation)
        let device = Device(), attested = P256.Signing.PrivateKey()
        let evidence = try await fixture.attestation(for: device, attested: attested)

        // The team tightens the policy (no software-backed… here: StrongBox only) while a request that
        // loaded the app before is checking the TEE attestation under the old one.
        var tightened: [String: Any] = [
            "policy": "android-key-attestation", "packageName": AndroidTestKeyDescription.packageName,
            "signingCertificateDigests": [AndroidTestKeyDescription.signingDigest.hexString], "minimumSecurityLevel": "strongbox",
        ]
        #expect(try await fixture.world.admin.call("PATCH", "/v1/teams/T/apps/\(fixture.app.id)", json: ["attestation": tightened]).status == 200)
        let late = DeviceAttestation(roots: .init(apple: [], android: [fixture.authority.root]),
                                     revocations: try #require(fixture.server.app.attestationRevocations), metrics: ServerMetrics(),
                                     challenges: try #require(fixture.server.app.attestationChallenges))
        let decoded = try JSONDecoder().decode(AttestationEvidence.self, from: try JSONSerialization.data(withJSONObject: evidence))
        try await late.check(decoded, settings: before, appID: appID, keyID: fixture.key.id,
                             devicePublicKey: Array(device.privateKey.publicKey.rawRepresentation), on: db)
        #expect(try await AttestedDeviceRecord.query(on: db).count() == 1, "the late request recorded its install")
        // Its assertions are refused under the new policy: it attests again, and its TEE key fails.
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 1)).errorCode
                == "attestation_unknown_key")
        // Back to the old policy, the install recorded under it asserts again.
        tightened["minimumSecurityLevel"] = "tee"
        #expect(try await fixture.world.admin.call("PATCH", "/v1/teams/T/apps/\(fixture.app.id)", json: ["attestation": tightened]).status == 200)
        #expect(try await AttestedDeviceRecord.query(on: db).count() == 0, "a policy change forgets the installs")
    }

    @Test("migration 012 gives installs attested before it their app's policy in force: they keep asserting")
    func migrationKeepsInstalls() async throws {
        let fixture = try await Fixture.make()
        defer { Task { try? await fixture.server.stop() } }
        let db = fixture.server.app.db
        let device = Device(), attested = P256.Signing.PrivateKey()
        #expect(try await fixture.request(device, try await fixture.attestation(for: device, attested: attested)).status == 200)
        let recorded = try #require(try await AttestedDeviceRecord.query(on: db).first()?.policyDigest)
        try await AddAttestedPolicyDigest().revert(on: db)
        try await AddAttestedPolicyDigest().prepare(on: db)
        #expect(try await AttestedDeviceRecord.query(on: db).first()?.policyDigest == recorded)
        #expect(try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 1)).status == 200)
    }

    @Test("an install that asked for no key for 180 days is forgotten and attests again; a recent one stays")
    func unusedInstallsAreForgotten() async throws {
        let fixture = try await Fixture.make()
        defer { Task { try? await fixture.server.stop() } }
        let db = fixture.server.app.db
        let idle = Device(), idleKey = P256.Signing.PrivateKey(), busy = Device(), busyKey = P256.Signing.PrivateKey()
        #expect(try await fixture.request(idle, try await fixture.attestation(for: idle, attested: idleKey)).status == 200)
        #expect(try await fixture.request(busy, try await fixture.attestation(for: busy, attested: busyKey)).status == 200)
        let later = Date().addingTimeInterval(DeviceAttestation.unusedInstallLifetime + 60)
        // The busy install asks again just before the pruning's clock.
        #expect(try await fixture.request(busy, try fixture.assertion(for: busy, attested: busyKey, counter: 1)).status == 200)
        try await (db as! any SQLDatabase).update(AttestedDeviceRecord.schema)
            .set("last_used_at", to: SQLBind(later.addingTimeInterval(-60))).where("device_public_key", .equal,
                                                                            SQLBind(busy.privateKey.publicKey.rawRepresentation.base64EncodedString())).run()
        try await DeviceAttestation.forgetUnusedInstalls(now: later, on: db)
        #expect(try await fixture.request(idle, try fixture.assertion(for: idle, attested: idleKey, counter: 1)).errorCode == "attestation_unknown_key")
        #expect(try await fixture.request(busy, try fixture.assertion(for: busy, attested: busyKey, counter: 2)).status == 200)
        #expect(try await fixture.request(idle, try await fixture.attestation(for: idle, attested: P256.Signing.PrivateKey())).status == 200)
    }

    @Test("a revoked intermediate refuses new attestations and the assertions of installs attested before")
    func revocation() async throws {
        let fixture = try await Fixture.make()
        defer { Task { try? await fixture.server.stop() } }
        let device = Device(), attested = P256.Signing.PrivateKey()
        #expect(try await fixture.request(device, try await fixture.attestation(for: device, attested: attested)).status == 200)

        let list = #"{"entries": {"\#(AndroidTestAuthority.intermediateSerial)": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}}}"#
        #expect(try await AttestationRevocations.store(Array(list.utf8), on: fixture.server.app.db) == 1)
        try await fixture.server.app.attestationRevocations!.refresh(on: fixture.server.app.db)

        let later = try await fixture.request(device, try fixture.assertion(for: device, attested: attested, counter: 1))
        #expect(later.errorCode == "attestation_revoked", "\(later.text)")
        let fresh = Device()
        let refused = try await fixture.request(fresh, try await fixture.attestation(for: fresh, attested: P256.Signing.PrivateKey()))
        #expect(refused.errorCode == "attestation_revoked", "\(refused.text)")
    }
}
