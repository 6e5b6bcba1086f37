import Foundation
import Testing

/// Concurrent creations of one unique name: the database's unique constraint decides, and every
/// loser gets 409 with a one-line reason, never 500 — on SQLite and on PostgreSQL.
@Suite("Unique names under concurrency")
struct UniqueRaceTests {
    static let concurrency = 12

    /// Sends `make` `concurrency` times at once; returns each reply.
    static func together(_ make: @escaping @Sendable () async throws -> HTTP.Reply) async throws -> [HTTP.Reply] {
        try await withThrowingTaskGroup(of: HTTP.Reply.self) { group in
            for _ in 0..<concurrency { group.addTask { try await make() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// One winner with `created`, and only clean 409s besides.
    static func expectOneWinner(_ replies: [HTTP.Reply], _ what: String, created: Int = 201) {
        let statuses = replies.map(\.status)
        #expect(statuses.filter { $0 == created }.count == 1, "\(what): \(statuses)")
        for loser in replies where loser.status != created {
            #expect(loser.status == 409, "\(what): \(loser.status) \(loser.text)")
            #expect(loser.errorCode == "conflict", "\(what): \(loser.text)")
            let reason = loser.object["reason"] as? String ?? ""
            #expect(!reason.isEmpty && !reason.contains("\n") && !reason.lowercased().contains("constraint"), "\(what): \(reason)")
        }
    }

    static func run(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let admin = flowers.admin

        // Teams: one name, many creators at once.
        Self.expectOneWinner(try await Self.together { try await admin.call("POST", "/v1/teams", json: ["name": "race"]) }, "team")

        // Collections: the same identifier in one team.
        Self.expectOneWinner(try await Self.together {
            try await admin.call("POST", "/v1/teams/T/collections", json: ["identifier": "Raced", "models": ["M"]])
        }, "collection")

        // An app's collections changed by several requests at once (schemathesis found a 500 here:
        // SQLite's "database is locked" from transactions that read before they write).
        try await flowers.world.bind(flowers.app.id, in: "T", to: [])
        let binds = try await Self.together {
            try await admin.call("PATCH", "/v1/teams/T/apps/\(flowers.app.id)", json: ["collections": ["FlowerModels"]])
        }
        for reply in binds { #expect(reply.status == 200 || reply.status == 409, "bind: \(reply.status) \(reply.text)") }
        let apps = try await admin.call("GET", "/v1/teams/T/apps").array
        #expect(apps.first { $0["id"] as? String == flowers.app.id }?["collections"] as? [String] == ["FlowerModels"])
        let creates = try await Self.together {
            try await admin.call("POST", "/v1/teams/T/apps", json: ["name": "raced", "platform": "ios", "collections": ["FlowerModels"]])
        }
        for reply in creates { #expect(reply.status == 201, "app: \(reply.status) \(reply.text)") }

        // Members: one invitation redeemed by several at once: one account joins, the others are
        // refused (410 used, or 409 for the name another request took).
        let code = try await flowers.world.invite(role: "viewer", to: "T")
        let members = try await Self.together {
            try await HTTP(base: admin.base).call("POST", "/v1/invitations/redeem", json: ["code": code, "name": "newcomer-\(UUID().uuidString.prefix(6))"])
        }
        #expect(members.filter { $0.status == 201 }.count == 1, "\(members.map(\.status))")
        for reply in members where reply.status != 201 {
            #expect(reply.status == 410 || reply.status == 409, "member: \(reply.status) \(reply.text)")
        }
        let list = try await admin.call("GET", "/v1/teams/T/members").array
        #expect(list.filter { ($0["name"] as? String ?? "").hasPrefix("newcomer") }.count == 1)

        // Deployments that name the same new model version at once, inside their transactions:
        // the version is made once and every deployment is created.
        let classifier = try await flowers.upload("shared-c"), stylizer = try await flowers.upload("shared-s")
        let names = (0..<Self.concurrency).map { "d\($0)" }
        let deployments = try await withThrowingTaskGroup(of: HTTP.Reply.self) { group in
            for name in names {
                group.addTask { try await flowers.deployment(name, models: ["FlowerClassifier": classifier, "FlowerStylizer": stylizer]).reply }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(deployments.allSatisfy { $0.status == 201 }, "\(deployments.map { "\($0.status) \($0.text)" })")
    }

    @Test("concurrent creations of one name: one 201, the rest 409 (SQLite)")
    func sqlite() async throws { try await Self.run(.sqlite) }

    @Test("concurrent creations of one name: one 201, the rest 409 (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.run(.postgres) }
}
