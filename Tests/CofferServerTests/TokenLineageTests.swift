@testable import CofferServer
import Fluent
import Foundation
import Testing

/// What a leaked API token can leave behind: nothing that outlives its revocation, by whichever
/// way it made it, and never so much that revoking it fails.
@Suite("Token lineage")
struct TokenLineageTests {
    @Test("a token made on the Tokens page with a password a leaked token chose goes when that token is revoked", arguments: Backend.allCases)
    func dashboardTokenOfALeakedPassword(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        _ = try await DashboardTests.ownerBrowser(server)
        let vera = try await flowers.world.member("vera", role: "developer", in: "T")
        let leaked = try #require(vera.token)
        let thief = Browser(base: server.base)
        #expect(try await thief.welcome(token: leaked, email: "thief@example.com", password: DashboardTests.password).status == 303)
        let made = try await thief.post("/dashboard/tokens", ["name": "escape", "password": DashboardTests.password])
        #expect(made.status == 200)
        let escape = try #require(DashboardAdminTests.field("shown-token", in: made.html))
        #expect(try await HTTP(base: server.base, token: escape).call("GET", "/v1/tokens").status == 200)

        // The account's holder revokes the leaked token with another of theirs.
        let veraID = try #require(try await UserRecord.query(on: server.app.db).filter(\.$name == "vera").first()?.requireID())
        let spare = try await TokenController.issue(for: veraID, name: "spare", on: server.app.db).1
        let leakedID = try #require(try await vera.call("GET", "/v1/tokens").array.first { ($0["name"] as? String) == "first token" }?["id"] as? String)
        #expect(try await HTTP(base: server.base, token: spare).call("DELETE", "/v1/tokens/\(leakedID)").status == 204)
        #expect(try await HTTP(base: server.base, token: escape).call("GET", "/v1/tokens").status == 401)
        #expect(try await HTTP(base: server.base, token: spare).call("GET", "/v1/tokens").status == 200)

        // A password chosen with a token stays that token's when it is changed (whoever chose it
        // could change it): what it makes still goes with the token.
        let owner = Browser(base: server.base)
        #expect(try await owner.welcome(token: spare, email: "vera@example.com", password: DashboardTests.password).status == 303)
        let changed = try await owner.post("/dashboard/account/password", ["current": DashboardTests.password, "password": "a brand new password"])
        #expect(changed.status == 303, "\(changed.status) \(changed.html.prefix(2000))")
        let signedIn = Browser(base: server.base)
        let signIn = try await signedIn.signIn("vera@example.com", "a brand new password")
        #expect(signIn.status == 303, "\(signIn.status) \(signIn.html.prefix(2000))")
        let own = try await signedIn.post("/dashboard/tokens", ["name": "ci", "password": "a brand new password"])
        let ci = try #require(DashboardAdminTests.field("shown-token", in: own.html))
        let spareID = try #require(try await HTTP(base: server.base, token: ci).call("GET", "/v1/tokens").array
            .first { ($0["name"] as? String) == "spare" }?["id"] as? String)
        #expect(try await HTTP(base: server.base, token: ci).call("DELETE", "/v1/tokens/\(spareID)").status == 204)
        #expect(try await HTTP(base: server.base, token: ci).call("GET", "/v1/tokens").status == 401)
    }

    @Test("an account holds at most 100 unrevoked tokens; revoking one makes room; revoking a token walks only live ones")
    func liveTokenCap() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let db = server.app.db
        let userID = try #require(try await TokenRecord.query(on: db).filter(\.$name == "bootstrap").first()?.$user.id)
        let (leakedRecord, leakedSecret) = try await TokenController.issue(for: userID, name: "leaked", on: db)
        let leaked = HTTP(base: server.base, token: leakedSecret)
        let live = try await TokenRecord.query(on: db).filter(\.$user.$id == userID).filter(\.$revokedAt == nil).count()
        var minted: [String] = []
        for index in live..<TokenController.maximumLiveTokens {
            let reply = try await leaked.call("POST", "/v1/tokens", json: ["name": "t\(index)"])
            #expect(reply.status == 201)
            minted.append(try #require(reply.object["id"] as? String))
        }
        let refused = try await leaked.call("POST", "/v1/tokens", json: ["name": "one-more"])
        #expect(refused.status == 409)
        #expect(refused.errorCode == "too_many_tokens")
        #expect(try await TokenRecord.query(on: db).filter(\.$name == "one-more").count() == 0)
        // Made and revoked again and again, revoked tokens pile up under the leaked one; they
        // count neither against the cap nor in the walk of its revocation.
        for round in 0..<3 {
            #expect(try await leaked.call("DELETE", "/v1/tokens/\(minted.removeLast())").status == 204)
            let again = try await leaked.call("POST", "/v1/tokens", json: ["name": "again\(round)"])
            #expect(again.status == 201)
            minted.append(try #require(again.object["id"] as? String))
        }
        _ = try await TokenController.issue(for: userID, name: "survivor", on: db)
        #expect(try await leaked.call("DELETE", "/v1/tokens/\(try leakedRecord.requireID())").status == 204)
        let left = try await TokenRecord.query(on: db).filter(\.$user.$id == userID).filter(\.$revokedAt == nil).all().map(\.name)
        #expect(Set(left) == ["bootstrap", "survivor"], "\(left)")
    }

    @Test("a token is never made under a revoked one, nor under another account's: the parent is checked where the token is written")
    func revokedParentMintsNothing() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let db = server.app.db
        let userID = try #require(try await TokenRecord.query(on: db).filter(\.$name == "bootstrap").first()?.$user.id)
        let (parent, _) = try await TokenController.issue(for: userID, name: "parent", on: db)
        let user = AuthenticatedUser(userID: userID, name: "admin", tokenID: try parent.requireID())
        // A request that authenticated with the parent just before it was revoked.
        parent.revokedAt = Date()
        try await parent.update(on: db)
        await #expect(throws: APIError.self) {
            _ = try await TokenController.create(name: "late", for: user, parent: try parent.requireID(), on: db)
        }
        let other = UserRecord(name: "other")
        try await other.create(on: db)
        let (foreign, _) = try await TokenController.issue(for: try other.requireID(), name: "foreign", on: db)
        await #expect(throws: APIError.self) {
            _ = try await TokenController.create(name: "late", for: user, parent: try foreign.requireID(), on: db)
        }
        #expect(try await TokenRecord.query(on: db).filter(\.$name == "late").count() == 0)
    }
}
