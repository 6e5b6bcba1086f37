import BlockingTestSupport
@testable import CofferServer
import Foundation
import SQLKit
import Testing

/// Two rotations of one app's credential that read the same credential: the second must not be
/// stored over the first, whose caller was already shown its new credential.
@Suite("Credential rotations that overlap")
struct RotationRaceTests {
    @Test("two rotations that read the same credential: the second never overwrites the first (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func overlapping() async throws {
        let server = try await TestServer.start(postgres: true)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let url = try #require(server.configuration.databaseURL)
        let id = try #require(UUID(uuidString: flowers.app.id))
        // A connection from outside the server holds the app's row for a while, so that both
        // rotations read the same credential and wait at their write. (Whether they really read
        // at the same moment depends on which database connections they get; the checks below
        // hold either way with the fix, and catch the overwrite whenever they did.)
        let holder = try ChildProcess(executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: [
            "psql", url, "-q", "-v", "ON_ERROR_STOP=1", "-c",
            "BEGIN; SELECT id FROM apps WHERE id = '\(flowers.app.id.lowercased())' FOR UPDATE; SELECT pg_sleep(6); COMMIT;",
        ], environment: ProcessInfo.processInfo.environment, errorOutput: .file(.standardError))
        // Until the row is locked: a NOWAIT lock from the server's own pool then fails.
        let sql = try #require(server.app.db as? any SQLDatabase)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            do {
                try await sql.raw("SELECT id FROM apps WHERE id = \(bind: id) FOR UPDATE NOWAIT").run()
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                break
            }
        }
        let path = "/v1/teams/T/apps/\(flowers.app.id)/credential"
        async let first = flowers.admin.call("POST", path)
        async let second = flowers.admin.call("POST", path)
        let replies = try await [first, second]
        let holderDeadline = Date().addingTimeInterval(120)
        while holder.isRunning, Date() < holderDeadline { try await Task.sleep(for: .milliseconds(50)) }
        if holder.isRunning { holder.signal(SIGKILL, group: true) }
        #expect(holder.wait() == 0, "psql holding the row ended by itself within 120 s")

        // Every credential shown is one the server stored: the one in force, or the one it
        // replaced. A rotation that read a credential already replaced is refused with 409.
        let shown = replies.filter { $0.status == 200 }.compactMap { $0.object["credential"] as? String }
        for reply in replies where reply.status != 200 {
            #expect(reply.status == 409 && reply.errorCode == "conflict", "\(reply.status) \(reply.text)")
        }
        let stored = try #require(try await AppRecord.find(id, on: server.app.db))
        let previous = try #require(stored.previousCredentialHash)
        switch shown.count {
        case 1:
            #expect(Secrets.matches(shown[0], hash: stored.credentialHash), "the credential shown is not the one stored")
            #expect(Secrets.matches(flowers.app.credential, hash: previous))
        case 2:
            // One after the other: the second replaced the first, which is then the previous one.
            let current = try #require(shown.first { Secrets.matches($0, hash: stored.credentialHash) }, "neither credential shown is stored")
            let other = try #require(shown.first { $0 != current })
            #expect(Secrets.matches(other, hash: previous), "the first credential shown was overwritten, not replaced")
        default:
            Issue.record("no rotation went through: \(replies.map { "\($0.status) \($0.text)" })")
        }
        let inForce = try #require(shown.first { Secrets.matches($0, hash: stored.credentialHash) })
        #expect(try await flowers.manifest(["deviceID": "overlap-1"], app: (flowers.app.id, inForce)).status != 401)
        let wrong = try await flowers.manifest(["deviceID": "overlap-1"], app: (flowers.app.id, "cfa_not-the-credential"))
        #expect(wrong.status == 401)
    }
}
