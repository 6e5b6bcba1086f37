import Crypto
import Fluent
import Foundation
import SQLKit
import Testing

@testable import CofferServer

/// The first start's owner token (``Bootstrap``): whatever stops a start, no token is committed
/// that nobody can read, and no token file is left whose token the database lacks.
@Suite("First start")
struct BootstrapTests {
    /// The token in `folder`'s bootstrap-token file.
    static func token(in folder: String) throws -> String {
        let contents = try #require(FileManager.default.contents(atPath: folder + "/bootstrap-token"), "no token file in \(folder)")
        return String(decoding: contents, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a bootstrap-token file kept from an earlier database stops the first start before anything is written; once removed, the start writes a token that works")
    func staleTokenFile() async throws {
        let first = try await TestServer.start { $0.bootstrapToken = nil }
        let folder = first.dataDirectory
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let stale = try Self.token(in: folder)
        try await first.stop(removingData: false)
        // A fresh database beside the kept folder, as when moving from SQLite to a new PostgreSQL.
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: folder + "/coffer.sqlite" + suffix) }

        do {
            let server = try await TestServer.start(dataDirectory: folder) { $0.bootstrapToken = nil }
            try await server.stop(removingData: false)
            Issue.record("the start went on beside a bootstrap-token file of another database")
        } catch {
            let line = String(describing: error)
            #expect(line.contains(folder + "/bootstrap-token") && line.contains("COFFER_BOOTSTRAP_TOKEN") && !line.contains("\n"), "\(line)")
            #expect(!line.contains(stale), "the token is in: \(line)")
        }
        #expect(try Self.token(in: folder) == stale, "the operator's file is theirs to remove")

        try FileManager.default.removeItem(atPath: folder + "/bootstrap-token")
        let server = try await TestServer.start(dataDirectory: folder) { $0.bootstrapToken = nil }
        defer { Task { try? await server.stop() } }
        let fresh = try Self.token(in: folder)
        #expect(fresh != stale)
        #expect(try await HTTP(base: server.base, token: fresh).call("GET", "/v1/tokens").status == 200, "the refused start stored no admin")
        #expect(try await HTTP(base: server.base, token: stale).call("GET", "/v1/tokens").status == 401)
    }

    @Test("a first start whose database write fails leaves no token file behind")
    func failedCommitLeavesNoFile() async throws {
        // A server with its tables, then emptied of users, and a database that refuses `admin`.
        let first = try await TestServer.start()
        let folder = first.dataDirectory
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sql = try #require(first.app.db as? any SQLDatabase)
        try await sql.raw("DELETE FROM api_tokens").run()
        try await sql.raw("DELETE FROM users").run()
        try await sql.raw("CREATE TRIGGER refuse_admin BEFORE INSERT ON users WHEN NEW.name = 'admin' BEGIN SELECT RAISE(ABORT, 'refused'); END").run()
        try await first.stop(removingData: false)

        do {
            let server = try await TestServer.start(dataDirectory: folder) { $0.bootstrapToken = nil }
            try await server.stop(removingData: false)
            Issue.record("the start went on though admin was not stored")
        } catch {
            #expect(!String(describing: error).contains("COFFER_BOOTSTRAP_TOKEN"), "not the stale file's refusal: \(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/bootstrap-token"), "a token file whose token was never stored")
    }

    @Test("instances starting together on one PostgreSQL: one admin, one token file (the winner's), and its token works on both",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func raceKeepsOneFile() async throws {
        let databaseURL = try await PostgresDatabases.create()
        defer { PostgresDatabases.drop(databaseURL) }
        let master = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
        func configuration() -> ServerConfiguration {
            ServerConfiguration(
                dataDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("coffer-node-" + UUID().uuidString).path,
                hostname: "127.0.0.1", port: 0, databaseURL: databaseURL, masterKeyBase64: master)
        }
        async let first = TestServer.start(configuration())
        async let second = TestServer.start(configuration())
        let (a, b) = try await (first, second)

        let holders = [a, b].filter { FileManager.default.fileExists(atPath: $0.dataDirectory + "/bootstrap-token") }
        #expect(holders.count == 1, "token files in: \(holders.map(\.dataDirectory))")
        if let winner = holders.first {
            let token = try Self.token(in: winner.dataDirectory)
            for server in [a, b] {
                #expect(try await HTTP(base: server.base, token: token).call("GET", "/v1/tokens").status == 200)
            }
        }
        #expect(try await UserRecord.query(on: a.app.db).count() == 1)
        try await a.stop()
        try await b.stop()
    }
}
