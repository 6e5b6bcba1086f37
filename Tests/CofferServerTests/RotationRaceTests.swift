@testable import CofferServer
import Foundation
import Testing

/// Two rotations of one app's credential that read the same credential: the second must not be
/// stored over the first, whose caller was already shown its new credential.
@Suite("Credential rotations that overlap")
struct RotationRaceTests {
    @Test("two rotations that read the same credential: one is stored, the other refused with 409 (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func overlapping() async throws {
        let server = try await TestServer.start(postgres: true)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let url = try #require(server.configuration.databaseURL)
        // A connection from outside the server holds the app's row for a while: both rotations
        // read the same credential and wait at their write; then they write one after the other.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = ["psql", url, "-q", "-v", "ON_ERROR_STOP=1", "-c",
                            "BEGIN; SELECT id FROM apps WHERE id = '\(flowers.app.id.lowercased())' FOR UPDATE; SELECT pg_sleep(3); COMMIT;"]
        holder.standardOutput = FileHandle.nullDevice
        try holder.run()
        try await Task.sleep(for: .milliseconds(800))
        let path = "/v1/teams/T/apps/\(flowers.app.id)/credential"
        async let first = flowers.admin.call("POST", path)
        async let second = flowers.admin.call("POST", path)
        let replies = try await [first, second]
        while holder.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        #expect(holder.terminationStatus == 0)

        #expect(replies.map(\.status).sorted() == [200, 409], "\(replies.map { "\($0.status) \($0.text)" })")
        let refused = try #require(replies.first { $0.status == 409 })
        #expect(refused.errorCode == "conflict")
        let shown = try #require(replies.first { $0.status == 200 }?.object["credential"] as? String)
        let stored = try #require(try await AppRecord.find(UUID(uuidString: flowers.app.id), on: server.app.db))
        #expect(Secrets.matches(shown, hash: stored.credentialHash), "the credential shown is not the one stored")
        #expect(stored.previousCredentialHash.map { Secrets.matches(flowers.app.credential, hash: $0) } == true)
        #expect(try await flowers.manifest(["deviceID": "overlap-1"], app: (flowers.app.id, shown)).status != 401)
        let wrong = try await flowers.manifest(["deviceID": "overlap-1"], app: (flowers.app.id, "cfa_not-the-credential"))
        #expect(wrong.status == 401)
    }
}
