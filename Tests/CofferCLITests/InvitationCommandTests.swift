import Foundation
import Testing

/// `coffer invitation` and `coffer app create --collections`, run as the built binary against a real
/// `coffer-server`: an owner makes, lists and revokes invitations; people who already have an account
/// accept them with their own login; used and revoked codes are refused.
@Suite("Invitation commands against a real coffer-server")
struct InvitationCommandTests {
    @Test("invitation create prints its code once, list never shows it, an existing user accepts with their own login, used and revoked codes are refused (65)")
    func invitations() async throws {
        guard let session = await AdminSession() else { return }
        defer { session.finish() }
        try await session.login()
        try await session.ok("team", "create", "Flowers")
        try await session.ok("team", "create", "Bees")
        // Bob and Carol have accounts of their own (made with invitations to Bees) and are logged in as themselves.
        _ = try await session.invite("bob", role: "viewer", to: "Bees")
        _ = try await session.invite("carol", role: "viewer", to: "Bees")
        let bob = ["COFFER_CONFIG_DIR": session.configFolder + "-bob"], carol = ["COFFER_CONFIG_DIR": session.configFolder + "-carol"]
        func teams(_ person: [String: String]) async throws -> [String: String] {
            let listed = try await session.coffer("team", "list", "--json", environment: person)
            #expect(listed.status == 0, "\(listed.stderr)")
            return Dictionary(uniqueKeysWithValues: AdminSession.array(listed.stdout).compactMap { team in
                (team["name"] as? String).map { ($0, team["role"] as? String ?? "") }
            })
        }
        #expect(try await teams(bob) == ["Bees": "viewer"])

        // Created: the code is printed once, on a line of its own. (Outputs holding a code are never
        // passed to #expect whole, so a failure does not print the code.)
        let created = try await session.ok("invitation", "create", "--team", "Flowers", "--role", "developer", "--note", "bob")
        let lines = created.split(separator: "\n").map(String.init)
        let codes = lines.filter { $0.hasPrefix("cfi_") }
        let codeLines = codes.count
        #expect(codeLines == 1)
        let code = try #require(codes.first)
        let occurrences = created.components(separatedBy: code).count - 1
        #expect(occurrences == 1)
        let heading = lines.first ?? ""
        #expect(heading.hasPrefix("Invitation to team Flowers as developer for bob (ID "))
        let id = String(heading.dropFirst("Invitation to team Flowers as developer for bob (ID ".count).prefix(36))

        // Listed without its code, in the table and in JSON.
        let table = try await session.ok("invitation", "list", "--team", "Flowers")
        let tableNamesIt = table.contains(id), tableShowsACode = table.contains("cfi_")
        #expect(tableNamesIt)
        #expect(!tableShowsACode)
        let listed = try await session.ok("invitation", "list", "--team", "Flowers", "--json")
        let jsonShowsACode = listed.contains("cfi_")
        #expect(!jsonShowsACode)
        let pending = AdminSession.array(listed)
        #expect(pending.map { $0["id"] as? String } == [id])
        #expect(pending.first?["state"] as? String == "pending")

        // Bob accepts with the account he is logged in as (the code as an argument).
        let accepted = try await session.coffer("invitation", "accept", code, environment: bob)
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(accepted.stdout == "Joined team Flowers as developer.\n")
        #expect(accepted.stderr.isEmpty)
        #expect(try await teams(bob) == ["Bees": "viewer", "Flowers": "developer"])
        #expect(await AdminSession.array(try session.ok("invitation", "list", "--team", "Flowers", "--json")).first?["state"] as? String == "accepted")

        // The used code does nothing for anyone else.
        await AdminSession.expectFailure(try session.coffer("invitation", "accept", code, environment: carol), 65,
                                   "this invitation was already used; ask the team's owner for a new one (HTTP 410 invitation_used)")
        #expect(try await teams(carol) == ["Bees": "viewer"])

        // Revoked before it is used: refused too.
        let second = try await session.ok("invitation", "create", "--team", "Flowers", "--role", "owner")
        let secondCode = try #require(second.split(separator: "\n").first { $0.hasPrefix("cfi_") }.map(String.init))
        let secondID = try #require(await AdminSession.array(try session.ok("invitation", "list", "--team", "Flowers", "--json"))
            .first { $0["state"] as? String == "pending" }?["id"] as? String)
        #expect(try await session.ok("invitation", "revoke", "--team", "Flowers", secondID) == "Revoked invitation \(secondID).\n")
        let states = AdminSession.array(try await session.ok("invitation", "list", "--team", "Flowers", "--json"))
        #expect(states.first { $0["id"] as? String == secondID }?["state"] as? String == "revoked")
        await AdminSession.expectFailure(try session.coffer("invitation", "accept", secondCode, environment: carol), 65,
                                   "this invitation was revoked; ask the team's owner for a new one (HTTP 410 invitation_revoked)")
        #expect(try await teams(carol) == ["Bees": "viewer"])
        // An accepted invitation cannot be revoked.
        await AdminSession.expectFailure(try session.coffer("invitation", "revoke", "--team", "Flowers", id), 65,
                                   "this invitation was already accepted by bob; remove the member instead (HTTP 409 conflict)")
    }

    @Test("app create --collections A,B binds the app to both; app list --json shows them")
    func appCollections() async throws {
        guard let session = await AdminSession() else { return }
        defer { session.finish() }
        try await session.login()
        try await session.ok("team", "create", "Flowers")
        for collection in ["A", "B", "C"] {
            try await session.ok("collection", "create", collection, "--team", "Flowers", "--models", "M")
        }
        let created = AdminSession.object(try await session.ok("app", "create", "--team", "Flowers", "--name", "Petals", "--platform", "ios",
                                                         "--collections", "A,B", "--json"))
        let appID = try #require(created["id"] as? String)
        let listed = AdminSession.array(try await session.ok("app", "list", "--team", "Flowers", "--json"))
        #expect(listed.first { $0["id"] as? String == appID }?["collections"] as? [String] == ["A", "B"])
    }
}
