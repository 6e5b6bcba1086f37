@testable import CofferServer
import Fluent
import Foundation
import Testing

/// An invitation is worth no more than what made it (``InvitationIssuer``). Before, redeeming
/// looked only at the invitation's own state: an owner about to be removed or demoted could make
/// an owner's invitation for a year and redeem it afterwards (`POST /v1/invitations/redeem` needs
/// no token), and a leaked owner token could make one whose new account no revocation reached.
@Suite("Invitations and their makers")
struct InvitationIssuerTests {
    @Test("an owner removed from a team loses the invitations they made to it: redeemed or accepted, refused as revoked (410), audited; other owners' and other teams' still redeem",
          arguments: Backend.allCases)
    func removedOwner(_ backend: Backend) async throws {
        guard !backend.isPostgres || TestServer.postgresURL != nil else { return }
        let server = try await TestServer.start(postgres: backend.isPostgres)
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        try await world.team("U")
        let olga = try await world.member("olga", role: "owner", in: "T")
        let ownerOfU = try await world.invite(role: "owner", to: "U")
        #expect(try await olga.call("POST", "/v1/invitations/accept", json: ["code": ownerOfU]).status == 200)

        // About to be removed, Olga makes an owner's invitation to T for a year, and one to U.
        let kept = try await olga.call("POST", "/v1/teams/T/invitations", json: ["role": "owner", "days": 365])
        #expect(kept.status == 201, "\(kept.text)")
        let keptCode = try #require(kept.object["code"] as? String)
        let toU = try await world.invite(role: "viewer", to: "U", by: olga)
        let admins = try await world.invite(role: "developer", to: "T")
        #expect(try await world.admin.call("DELETE", "/v1/teams/T/members/olga").status == 204)

        let anonymous = HTTP(base: server.base)
        let redeemed = try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": keptCode, "name": "olga-again"])
        #expect(redeemed.status == 410)
        #expect(redeemed.errorCode == "invitation_revoked")
        let accepted = try await olga.call("POST", "/v1/invitations/accept", json: ["code": keptCode])
        #expect(accepted.status == 410)
        #expect(accepted.errorCode == "invitation_revoked")
        #expect(try await olga.call("GET", "/v1/teams/T/members").status == 403)
        let listed = try await world.admin.call("GET", "/v1/teams/T/invitations")
        #expect(listed.array.first { $0["id"] as? String == kept.object["id"] as? String }?["state"] as? String == "revoked")
        let audited = try await AuditRecord.query(on: server.app.db).filter(\.$action == "invitation.revoke").all()
        #expect(audited.map(\.reason) == ["olga, who made it, was removed from the team"])
        #expect(audited.map(\.actor) == ["admin"])

        // Another owner's invitation to T, and Olga's to U (she is still its owner), redeem.
        #expect(try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": admins, "name": "dora"]).status == 201)
        #expect(try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": toU, "name": "ulla"]).status == 201)
    }

    @Test("an owner given a lower role loses the invitations they made: refused as revoked, also once an owner again; new ones work")
    func demotedOwner() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let olga = try await world.member("olga", role: "owner", in: "T")
        let code = try await world.invite(role: "owner", to: "T", by: olga)
        #expect(try await world.admin.call("POST", "/v1/teams/T/members", json: ["name": "olga", "role": "developer"]).status == 200)

        let anonymous = HTTP(base: server.base)
        let refused = try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": code, "name": "mallory"])
        #expect(refused.status == 410)
        #expect(refused.errorCode == "invitation_revoked")
        let audited = try await AuditRecord.query(on: server.app.db).filter(\.$action == "invitation.revoke").all()
        #expect(audited.map(\.reason) == ["olga, who made it, is no longer an owner"])

        // An owner again: what was revoked stays revoked; what she makes now works.
        #expect(try await world.admin.call("POST", "/v1/teams/T/members", json: ["name": "olga", "role": "owner"]).status == 200)
        #expect(try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": code, "name": "mallory"]).errorCode == "invitation_revoked")
        let fresh = try await world.invite(role: "viewer", to: "T", by: olga)
        #expect(try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": fresh, "name": "vic"]).status == 201)
    }

    @Test("revoking a token revokes the invitations made with it and with the tokens made with it (audited); an invitation of another token of the same owner redeems",
          arguments: Backend.allCases)
    func revokedToken(_ backend: Backend) async throws {
        guard !backend.isPostgres || TestServer.postgresURL != nil else { return }
        let server = try await TestServer.start(postgres: backend.isPostgres)
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let leaked = try await world.member("olga", role: "owner", in: "T")
        let olgaID = try #require(try await UserRecord.query(on: server.app.db).filter(\.$name == "olga").first()?.requireID())
        let spareToken = try await TokenController.issue(for: olgaID, name: "spare", on: server.app.db).1
        let spare = HTTP(base: server.base, token: spareToken)

        // Whoever holds the leaked token makes an owner's invitation with it, and one with a token made with it.
        let minted = try await leaked.call("POST", "/v1/tokens", json: ["name": "thief-own"])
        #expect(minted.status == 201)
        let childToken = try #require(minted.object["token"] as? String)
        let child = HTTP(base: server.base, token: childToken)
        let withLeaked = try await world.invite(role: "owner", to: "T", by: leaked)
        let withChild = try await world.invite(role: "owner", to: "T", by: child)
        let withSpare = try await world.invite(role: "viewer", to: "T", by: spare)

        let leakedID = try #require(try await leaked.call("GET", "/v1/tokens").array.first { ($0["name"] as? String) == "first token" }?["id"] as? String)
        #expect(try await spare.call("DELETE", "/v1/tokens/\(leakedID)").status == 204)

        let anonymous = HTTP(base: server.base)
        for (index, code) in [withLeaked, withChild].enumerated() {
            let refused = try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": code, "name": "thief-\(index)"])
            #expect(refused.status == 410)
            #expect(refused.errorCode == "invitation_revoked")
        }
        let audited = try await AuditRecord.query(on: server.app.db).filter(\.$action == "invitation.revoke").all()
        #expect(audited.map(\.reason) == ["the API token that made it was revoked", "the API token that made it was revoked"])
        // Olga is still an owner, and her other token's invitation is hers.
        #expect(try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": withSpare, "name": "vic"]).status == 201)
        #expect(try await spare.call("GET", "/v1/teams/T/invitations").status == 200)
    }

    @Test("redeeming checks the maker and the token again: an owner demoted, or a token revoked, behind the invitation's back still makes it refused as revoked")
    func checkedAtRedemption() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let db = server.app.db
        let world = World(server)
        try await world.team("T")
        let olga = try await world.member("olga", role: "owner", in: "T")
        let olgaID = try #require(try await UserRecord.query(on: db).filter(\.$name == "olga").first()?.requireID())
        let (spareRecord, spareToken) = try await TokenController.issue(for: olgaID, name: "spare", on: db)
        let spare = HTTP(base: server.base, token: spareToken)
        let byOlga = try await world.invite(role: "owner", to: "T", by: olga)
        let bySpare = try await world.invite(role: "owner", to: "T", by: spare)

        // Changes no code path of the server makes without revoking: only the check at redemption stands.
        try await MembershipRecord.query(on: db).filter(\.$user.$id == olgaID).set(\.$role, to: .developer).update()
        let anonymous = HTTP(base: server.base)
        let demoted = try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": byOlga, "name": "mallory"])
        #expect(demoted.status == 410)
        #expect(demoted.errorCode == "invitation_revoked")
        try await MembershipRecord.query(on: db).filter(\.$user.$id == olgaID).set(\.$role, to: .owner).update()
        let spareID = try spareRecord.requireID()
        try await TokenRecord.query(on: db).filter(\.$id == spareID).set(\.$revokedAt, to: Date()).update()
        let revoked = try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": bySpare, "name": "mallory"])
        #expect(revoked.status == 410)
        #expect(revoked.errorCode == "invitation_revoked")
        // The first one again, its maker an owner once more and its token live: it redeems.
        #expect(try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": byOlga, "name": "vic"]).status == 201)
    }

    @Test("an invitation made on the Members page hangs on the token that chose the password: revoking it revokes the invitation; one made with a password chosen on joining stays")
    func dashboardInvitation() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let db = server.app.db
        let world = World(server)
        try await world.team("T")
        // The first owner's password was chosen with the bootstrap token, at set-up.
        let admin = try await DashboardTests.ownerBrowser(server)
        let adminID = try #require(try await UserRecord.query(on: db).filter(\.$name == "admin").first()?.requireID())
        let spareToken = try await TokenController.issue(for: adminID, name: "spare", on: db).1
        let spare = HTTP(base: server.base, token: spareToken)

        // Carol joins as an owner on the join page, with a password no token chose, and invites too.
        let carolCode = try await world.invite(role: "owner", to: "T", by: spare)
        let carol = Browser(base: server.base)
        _ = try await carol.get("/dashboard/join")
        let joined = try await carol.post("/dashboard/join", ["code": carolCode, "name": "carol", "email": "carol@example.com", "password": "carol's own password"])
        #expect(joined.status == 303, "\(joined.status)")
        _ = try await carol.get("/dashboard/teams/T/members")
        let byCarol = try await carol.post("/dashboard/teams/T/members", ["name": "dave", "role": "viewer", "password": "carol's own password"])
        #expect(byCarol.status == 200)
        let carolsCode = try #require(DashboardAdminTests.field("shown-code", in: byCarol.html))
        let byAdmin = try await admin.post("/dashboard/teams/T/members", ["name": "erin", "role": "owner", "password": DashboardTests.password])
        #expect(byAdmin.status == 200)
        let adminsCode = try #require(DashboardAdminTests.field("shown-code", in: byAdmin.html))

        let bootstrapID = try #require(try await TokenRecord.query(on: db).filter(\.$name == "bootstrap").first()?.requireID())
        #expect(try await spare.call("DELETE", "/v1/tokens/\(bootstrapID)").status == 204)

        let anonymous = HTTP(base: server.base)
        let refused = try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": adminsCode, "name": "erin"])
        #expect(refused.status == 410)
        #expect(refused.errorCode == "invitation_revoked")
        #expect(try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": carolsCode, "name": "dave"]).status == 201)
    }
}
