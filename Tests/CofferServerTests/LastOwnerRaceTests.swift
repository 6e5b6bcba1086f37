@testable import CofferServer
import Fluent
import Foundation
import Testing

/// A team always keeps an owner: before, removing (or demoting) two owners at the same moment let
/// both requests count two owners and both go ahead, leaving a team nobody could manage.
@Suite("The last owner, under concurrent changes")
struct LastOwnerRaceTests {
    static func run(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres)
        defer { Task { try? await server.stop() } }
        let world = World(server)
        for round in 0..<12 {
            let team = "race-\(round)"
            try await world.team(team)
            let other = "owner-\(round)"
            _ = try await world.member(other, role: "owner", in: team)
            // The admin removes the other owner and itself (or demotes it) at once.
            async let first = world.admin.call("DELETE", "/v1/teams/\(team)/members/\(other)")
            async let second = round.isMultiple(of: 2)
                ? world.admin.call("DELETE", "/v1/teams/\(team)/members/admin")
                : world.admin.call("POST", "/v1/teams/\(team)/members", json: ["name": "admin", "role": "developer"])
            let statuses = [try await first.status, try await second.status].sorted()
            let teamID = try #require(try await TeamRecord.query(on: server.app.db).filter(\.$name == team).first()?.requireID())
            let owners = try await MembershipRecord.query(on: server.app.db).filter(\.$team.$id == teamID).filter(\.$role == .owner).count()
            #expect(owners == 1, "round \(round): \(owners) owners left, answers \(statuses)")
            // One change went through; the other was refused (409 last owner, or 403/404 when the
            // admin's own change ran first and it no longer owns the team).
            #expect(statuses.filter { (200..<300).contains($0) }.count == 1 && statuses.contains { $0 >= 400 }, "round \(round): \(statuses)")
        }
    }

    @Test("two owners removed or demoted at once: one change is refused, one owner stays (SQLite)")
    func sqlite() async throws { try await Self.run(.sqlite) }

    @Test("the same on PostgreSQL", .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.run(.postgres) }
}
