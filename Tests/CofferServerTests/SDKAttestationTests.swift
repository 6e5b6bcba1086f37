@testable import AttestationTestSupport
@testable import CofferServer
import Coffer
import CofferAttestation
import CofferFormat
import Crypto
import Fluent
import Foundation
import NIOConcurrencyHelpers
import Testing

/// The SDK's side of issue 17 against a real server: with a ``DeviceAttestor`` (here one over the
/// test authority, standing in for DCAppAttestService), the first key request attests and later
/// ones assert; without one, an attesting app's key is refused with a reason naming attestation.
@Suite("SDK attestation")
struct SDKAttestationTests {
    /// App Attest as a test authority plays it: keys made on request, assertions with the key's own counter.
    final class TestAppAttest: DeviceAttestor, @unchecked Sendable {
        let authority: AppleTestAuthority
        private let keys = NIOLockedValueBox<[[UInt8]: (device: AppleTestAuthority.Device, counter: UInt32)]>([:])
        var format: String { "apple-app-attest" }

        init(authority: AppleTestAuthority) { self.authority = authority }

        func attestNewKey(clientDataHash: Data) async throws -> AttestationStatement {
            let device = AppleTestAuthority.Device()
            keys.withLockedValue { $0[device.keyID] = (device, 0) }
            var knobs = AppleTestAuthority.Knobs()
            knobs.notValidBefore = Date() - 3_600
            knobs.notValidAfter = Date() + 86_400
            let object = try authority.attestation(device: device, clientDataHash: Array(clientDataHash), knobs: knobs)
            return AttestationStatement(keyID: Data(device.keyID), attestationObject: Data(object))
        }

        func assert(keyID: Data, clientData: Data, counter: UInt32) async throws -> Data {
            let next = keys.withLockedValue { keys -> (AppleTestAuthority.Device, UInt32)? in
                guard let entry = keys[Array(keyID)] else { return nil }
                keys[Array(keyID)] = (entry.device, entry.counter + 1)
                return (entry.device, entry.counter + 1)
            }
            guard let (device, count) = next else { throw CofferError.invalidConfiguration("unknown App Attest key") }
            return Data(try AppleTestAuthority.assertion(device: device, clientData: Array(clientData), counter: count))
        }

        var attestedKeys: Int { keys.withLockedValue { $0.count } }
    }

    @Test("an SDK with an attestor attests once, asserts later, and opens the model; without one the key is refused naming attestation")
    func attestedOpen() async throws {
        let authority = try AppleTestAuthority()
        let server = try await TestServer.start { $0.attestationRoots = DeviceAttestation.Roots(apple: [authority.root], android: []) }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let app = try await world.app(in: "T", name: "cam")
        let policy = AppleTestAuthority.policy
        #expect(try await world.admin.call("PATCH", "/v1/teams/T/apps/\(app.id)", json: ["attestation": [
            "policy": "apple-app-attest", "appleTeamID": policy.teamID, "bundleID": policy.bundleID]]).status == 200)
        let key = try await world.key(in: "T")
        let collection = try await world.release(key, in: "T", to: [app.id])
        let signingKey = try await HTTP(base: server.base).call("GET", "/v1/signing-key").object["publicKey"] as? String ?? ""
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sdk-attest-" + UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: cache) }

        func client(_ attestor: (any DeviceAttestor)?) throws -> CofferClient {
            var configuration = try CofferConfiguration(serverURL: server.base, appID: app.id, credential: app.credential, publicKey: signingKey,
                                                        cacheDirectory: cache)
            configuration.attestor = attestor
            return try CofferClient(configuration: configuration)
        }

        // No attestor: the manifest and model arrive, the key does not.
        let plain = try await client(nil).beginAccessing(identifier: collection)
        do {
            _ = try await plain.entries["m"]?.data()
            Issue.record("the key was delivered without attestation")
        } catch let CofferError.keyRefused(_, code, reason) {
            #expect(code == "attestation_required")
            #expect(reason.contains("apple-app-attest"))
        }

        let attestor = TestAppAttest(authority: authority)
        let first = try await client(attestor).beginAccessing(identifier: collection)
        #expect(try await first.entries["m"]?.data() == Data("model of \(key.id)".utf8))
        #expect(attestor.attestedKeys == 1)
        let row = try #require(try await AttestedDeviceRecord.query(on: server.app.db).first())
        #expect(row.counter == 0)

        // The model key is forgotten (as after a key store reset of that one entry): the next open asserts.
        let stored = cache.appendingPathComponent("keys/model-key.\(key.id)")
        #expect(FileManager.default.fileExists(atPath: stored.path))
        try FileManager.default.removeItem(at: stored)
        let second = try await client(attestor).beginAccessing(identifier: collection)
        #expect(try await second.entries["m"]?.data() == Data("model of \(key.id)".utf8))
        #expect(attestor.attestedKeys == 1, "no second attestation")
        let asserted = try #require(try await AttestedDeviceRecord.query(on: server.app.db).first())
        #expect(asserted.counter == 1)
        #expect(try await AttestedDeviceRecord.query(on: server.app.db).count() == 1)

        // The server forgets the attested key: the SDK attests a new one, once, and still opens.
        try await AttestedDeviceRecord.query(on: server.app.db).delete()
        try FileManager.default.removeItem(at: stored)
        let third = try await client(attestor).beginAccessing(identifier: collection)
        #expect(try await third.entries["m"]?.data() == Data("model of \(key.id)".utf8))
        #expect(attestor.attestedKeys == 2)
    }
}
