@testable import CofferServer
import CofferFormat
import Crypto
import Fluent
import Foundation
import Testing

/// Issue 14's attacks, each as a test over the real HTTP interface: the cross-tenant takeover
/// through `member add`, one app credential reaching every key of its team, and a rotated-away
/// credential starving its app.
@Suite("Trust boundaries")
struct TrustBoundaryTests {
    @Test("member add hands out no token; the first owner's account for the invited name reaches nothing of the second team")
    func takeover() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("Victim")
        _ = try await world.key(in: "Victim")
        try await world.team("Lobby")

        // Mallory has her own account and her own team.
        let mallory = try await world.member("mallory", role: "viewer", in: "Lobby")
        #expect(try await mallory.call("POST", "/v1/teams", json: ["name": "Evil"]).status == 201)

        // She "adds" the victim's name: the answer is an invitation, never a token or an account.
        let added = try await mallory.call("POST", "/v1/teams/Evil/members", json: ["name": "alice@victim.com", "role": "owner"])
        #expect(added.status == 201)
        #expect(!added.text.contains("cft_"))
        #expect(added.object["token"] == nil)
        let evilCode = (added.object["invitation"] as? [String: Any])?["code"] as? String ?? ""
        #expect(evilCode.hasPrefix("cfi_"))
        // No account was made by adding.
        #expect(try await server.app.db.query(UserRecord.self).filter(\.$name == "alice@victim.com").count() == 0)

        // She redeems her own invitation under the victim's name: that is her own account.
        let taken = try await HTTP(base: server.base).call("POST", "/v1/invitations/redeem", json: ["code": evilCode, "name": "alice@victim.com"])
        #expect(taken.status == 201)
        let malloryAsAlice = HTTP(base: server.base, token: taken.object["token"] as? String)

        // The victim's owner adds the same name: an invitation again, the existing account is not attached.
        let victimAdd = try await world.admin.call("POST", "/v1/teams/Victim/members", json: ["name": "alice@victim.com", "role": "developer"])
        #expect(victimAdd.status == 201)
        #expect(victimAdd.object["token"] == nil)
        let victimCode = (victimAdd.object["invitation"] as? [String: Any])?["code"] as? String ?? ""
        #expect(!(try await world.admin.call("GET", "/v1/teams/Victim/members")).array.contains { $0["name"] as? String == "alice@victim.com" })

        // Mallory's means reach nothing in the victim's team.
        #expect(try await malloryAsAlice.call("GET", "/v1/teams/Victim/keys").status == 403)
        #expect(try await malloryAsAlice.call("POST", "/v1/teams/Victim/keys", json: ["name": "mine"]).status == 403)
        #expect(try await malloryAsAlice.call("GET", "/v1/teams/Victim/members").status == 403)
        #expect(try await malloryAsAlice.call("GET", "/v1/teams").array.map { $0["name"] as? String } == ["Evil"])

        // The real Alice redeems the victim's invitation with her own new account.
        let clash = try await HTTP(base: server.base).call("POST", "/v1/invitations/redeem", json: ["code": victimCode, "name": "alice@victim.com"])
        #expect(clash.status == 409)
        let alice = try await HTTP(base: server.base).call("POST", "/v1/invitations/redeem", json: ["code": victimCode, "name": "alice"])
        #expect(alice.status == 201)
        #expect(alice.object["team"] as? String == "Victim")
        let aliceHTTP = HTTP(base: server.base, token: alice.object["token"] as? String)
        #expect(try await aliceHTTP.call("GET", "/v1/teams/Victim/keys").status == 200)
        // Still nothing for Mallory.
        #expect(try await malloryAsAlice.call("GET", "/v1/teams/Victim/keys").status == 403)

        // A used code is refused, for a new account and for an existing one.
        let reused = try await HTTP(base: server.base).call("POST", "/v1/invitations/redeem", json: ["code": victimCode, "name": "alice2"])
        #expect(reused.status == 410)
        #expect(reused.errorCode == "invitation_used")
        #expect(try await malloryAsAlice.call("POST", "/v1/invitations/accept", json: ["code": victimCode]).errorCode == "invitation_used")
    }

    @Test("invitations: accepted with one's own account; revoked, expired and unknown codes refused; listed and audited")
    func invitations() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        try await world.team("U")
        let bob = try await world.member("bob", role: "viewer", in: "U")

        // Bob accepts with the account he has.
        let code = try await world.invite(role: "developer", to: "T", note: "bob")
        let joined = try await bob.call("POST", "/v1/invitations/accept", json: ["code": code])
        #expect(joined.status == 200)
        #expect(joined.object["team"] as? String == "T")
        #expect(joined.object["role"] as? String == "developer")
        #expect(try await bob.call("GET", "/v1/teams/T/keys").status == 200)
        // Already a member: 409, and that invitation stays unused.
        let second = try await world.invite(role: "owner", to: "T")
        #expect(try await bob.call("POST", "/v1/invitations/accept", json: ["code": second]).status == 409)

        // Revoked.
        let list = try await world.admin.call("GET", "/v1/teams/T/invitations")
        #expect(list.status == 200)
        #expect(!list.text.contains("cfi_"))
        let pending = list.array.first { $0["state"] as? String == "pending" }
        let pendingID = pending?["id"] as? String ?? ""
        #expect(try await world.admin.call("DELETE", "/v1/teams/T/invitations/\(pendingID)").status == 204)
        let revoked = try await HTTP(base: server.base).call("POST", "/v1/invitations/redeem", json: ["code": second, "name": "carol"])
        #expect(revoked.errorCode == "invitation_revoked")
        #expect(revoked.status == 410)
        // An accepted one cannot be revoked.
        let acceptedID = list.array.first { $0["state"] as? String == "accepted" }?["id"] as? String ?? ""
        #expect(try await world.admin.call("DELETE", "/v1/teams/T/invitations/\(acceptedID)").status == 409)

        // Expired.
        let short = try await world.admin.call("POST", "/v1/teams/T/invitations", json: ["role": "viewer", "days": 0.00001])
        #expect(short.status == 201)
        try await Task.sleep(for: .milliseconds(1500))
        let expired = try await HTTP(base: server.base).call("POST", "/v1/invitations/redeem", json: ["code": short.object["code"] as? String ?? "", "name": "dave"])
        #expect(expired.errorCode == "invitation_expired")

        // Unknown.
        let unknown = try await HTTP(base: server.base).call("POST", "/v1/invitations/redeem", json: ["code": "cfi_" + UUID().uuidString, "name": "erin"])
        #expect(unknown.status == 404)
        #expect(unknown.errorCode == "invalid_invitation")

        // Only owners make or see invitations; anonymous callers cannot accept.
        #expect(try await bob.call("POST", "/v1/teams/T/invitations", json: ["role": "owner"]).status == 403)
        #expect(try await bob.call("GET", "/v1/teams/T/invitations").status == 403)
        #expect(try await HTTP(base: server.base).call("POST", "/v1/invitations/accept", json: ["code": code]).status == 401)

        // Audited, never with the code.
        let audit = try await world.admin.call("GET", "/v1/teams/T/audit")
        let actions = Set(audit.array.compactMap { $0["action"] as? String })
        #expect(actions.isSuperset(of: ["invitation.create", "invitation.accept", "invitation.revoke"]))
        #expect(!audit.text.contains("cfi_"))
        #expect(!String(decoding: audit.body, as: UTF8.self).contains(code))
    }

    @Test("guessing invitation codes and API tokens runs out of the client address's budget")
    func guessing() async throws {
        let server = try await TestServer.start { $0.authFailuresPerAddressPerMinute = 5 }
        defer { Task { try? await server.stop() } }
        let anonymous = HTTP(base: server.base)
        for _ in 0..<5 {
            #expect(try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": "cfi_guess\(UUID())", "name": "x"]).status == 404)
        }
        let limited = try await anonymous.call("POST", "/v1/invitations/redeem", json: ["code": "cfi_guess", "name": "x"])
        #expect(limited.status == 429)
        #expect(Int(limited.header("Retry-After") ?? "") ?? 0 >= 1)
        // Bearer guesses share the budget: even the right token is refused until the minute is over.
        let bearer = try await HTTP(base: server.base, token: "cft_wrong").call("GET", "/v1/teams")
        #expect(bearer.status == 429)
        #expect(try await HTTP(base: server.base, token: server.adminToken).call("GET", "/v1/teams").status == 429)
    }

    static func binding(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres)
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let keyX = try await world.key(in: "T", name: "x")
        let keyY = try await world.key(in: "T", name: "y")
        let unused = try await world.key(in: "T", name: "unused")
        let drafted = try await world.key(in: "T", name: "drafted")
        let app = try await world.app(in: "T")
        let x = try await world.release(keyX, in: "T", to: [app.id])
        let y = try await world.release(keyY, in: "T", to: [])
        // A draft of X that uses another key, never activated.
        let sealed = Data(try SealedModel.seal(Array("draft".utf8), name: "m", using: .modelKey(drafted)))
        let address = sealed.sha256Hex
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(address)", body: sealed).status == 201)
        #expect(try await world.admin.call("POST", "/v1/teams/T/collections/\(x)/deployments", json: ["name": "draft", "models": ["m": address]]).status == 201)

        let listed = try await world.admin.call("GET", "/v1/teams/T/apps")
        #expect(listed.array.first?["collections"] as? [String] == [x])

        let device = Device()
        let delivered = try await device.request(keyX.id, app: app, on: server)
        #expect(delivered.status == 200, "\(delivered.text)")
        #expect(try device.open(delivered, keyID: keyX.id) == keyX.key)
        for key in [keyY, unused, drafted] {
            let refused = try await device.request(key.id, app: app, on: server)
            #expect(refused.status == 403)
            #expect(refused.errorCode == "not_in_app_collections")
        }
        let flowers = Flowers(world: world, app: app, key: keyX)
        #expect(try await flowers.manifest(["deviceID": device.id], collection: x).status == 200)
        let manifestY = try await flowers.manifest(["deviceID": device.id], collection: y)
        #expect(manifestY.status == 403)
        #expect(manifestY.errorCode == "collection_not_bound")
        // A collection that does not exist answers the same: names are not probed.
        #expect(try await flowers.manifest(["deviceID": device.id], collection: "Nope").errorCode == "collection_not_bound")

        let audit = try await world.admin.call("GET", "/v1/teams/T/audit")
        #expect(audit.array.contains { $0["reason"] as? String == "not_in_app_collections" })
        #expect(audit.array.contains { $0["reason"] as? String == "collection_not_bound" })

        // Binding Y too takes effect at once.
        try await world.bind(app.id, in: "T", to: [x, y])
        #expect(try await device.request(keyY.id, app: app, on: server).status == 200)
        #expect(try await flowers.manifest(["deviceID": device.id], collection: y).status == 200)
        // And unbinding X takes it away.
        try await world.bind(app.id, in: "T", to: [y])
        #expect(try await device.request(keyX.id, app: app, on: server).status == 403)
        #expect(try await flowers.manifest(["deviceID": device.id], collection: x).status == 403)
        // Another team's collection cannot be named.
        try await world.team("U")
        let other = try await world.admin.call("PATCH", "/v1/teams/U/apps/\(app.id)", json: ["collections": [x]])
        #expect(other.status == 404)
        let unknownCollection = try await world.admin.call("PATCH", "/v1/teams/T/apps/\(app.id)", json: ["collections": ["Nope"]])
        #expect(unknownCollection.status == 400)
        #expect(unknownCollection.errorCode == "unknown_collection")
    }

    @Test("an app bound to X gets X's released keys and manifests only (SQLite)")
    func bindingSQLite() async throws { try await Self.binding(.sqlite) }

    @Test("an app bound to X gets X's released keys and manifests only (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func bindingPostgres() async throws { try await Self.binding(.postgres) }

    /// How many clock minutes (the refusal log's windows) a stretch from `start` to now touched.
    static func minutes(since start: Date) -> Int {
        let minute = { (date: Date) in Int((date.timeIntervalSince1970 / 60).rounded(.down)) }
        return minute(Date()) - minute(start) + 1
    }

    @Test("900 requests with a rotated-away credential leave the new one working; floods write a few audit rows")
    func rotatedFlood() async throws {
        // The address's budget of wrong and rotated-away credentials (60 a minute by default,
        // ManifestCredentialFailureTests) is raised here: this test counts the audit rows a longer
        // flood of them writes (900 + 250 failures).
        let server = try await TestServer.start { $0.authFailuresPerAddressPerMinute = 2000 }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        let app = try await world.app(in: "T")
        try await world.release(key, in: "T", to: [app.id])
        let rotated = try await world.admin.call("POST", "/v1/teams/T/apps/\(app.id)/credential")
        let fresh = (app.id, rotated.object["credential"] as? String ?? "")

        let attacker = Device(id: "attacker")
        let revokedFlood = Date()
        for index in 0..<900 {
            let reply = try await attacker.request(key.id, app: app, on: server)
            if reply.status != 403 || reply.errorCode != "credential_revoked" {
                Issue.record("request \(index) answered \(reply.status) \(reply.errorCode ?? "")")
                break
            }
        }
        // Past the app's 600 a minute, had the old credential been charged to it.
        let device = Device()
        let delivered = try await device.request(key.id, app: fresh, on: server)
        #expect(delivered.status == 200, "\(delivered.text)")

        let revokedMinutes = Self.minutes(since: revokedFlood)

        // A flood of wrong credentials and made-up apps (within the address's budget).
        let invalidFlood = Date()
        for index in 0..<250 {
            let made = index.isMultiple(of: 2) ? (app.id, "cfa_wrong\(index)") : (UUID().uuidString, "cfa_\(index)")
            #expect(try await Device(id: "d\(index)").request(key.id, app: made, on: server).status == 401)
        }
        let invalidMinutes = Self.minutes(since: invalidFlood)
        try await server.app.refusals!.flush(on: server.app.db)
        let rows = try await server.app.db.query(AuditRecord.self).filter(\.$outcome == "refused").all()
        // One row per kind and clock minute the flood lasted into (one or two on a quiet machine,
        // more on a loaded one), the repeats counted in them.
        let revokedRows = rows.filter { $0.reason == "credential_revoked" }
        #expect((1...revokedMinutes).contains(revokedRows.count), "\(revokedRows.count) rows over \(revokedMinutes) minutes")
        #expect(revokedRows.reduce(0) { $0 + ($1.repeatCount ?? 1) } == 900)
        let invalidRows = rows.filter { $0.reason == "invalid_credential" }
        #expect((1...invalidMinutes).contains(invalidRows.count), "\(invalidRows.count) rows over \(invalidMinutes) minutes")
        #expect(invalidRows.reduce(0) { $0 + ($1.repeatCount ?? 1) } == 250)
        #expect(rows.count <= revokedMinutes + invalidMinutes)
        let audit = try await world.admin.call("GET", "/v1/teams/T/audit")
        #expect(audit.array.filter { $0["reason"] as? String == "credential_revoked" }.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 900)
    }

    @Test("the client address's budget refuses key requests before anything is read or written")
    func addressBudget() async throws {
        let server = try await TestServer.start { $0.deviceRequestsPerAddressPerMinute = 20 }
        defer { Task { try? await server.stop() } }
        for index in 0..<20 {
            #expect(try await Device(id: "d\(index)").request("k", app: (UUID().uuidString, "cfa_x"), on: server).status == 401)
        }
        let limited = try await Device().request("k", app: (UUID().uuidString, "cfa_x"), on: server)
        #expect(limited.status == 429)
        try await server.app.refusals!.flush(on: server.app.db)
        let rows = try await server.app.db.query(AuditRecord.self).filter(\.$outcome == "refused").all()
        #expect(rows.reduce(0) { $0 + ($1.repeatCount ?? 1) } == 20)
    }

    @Test("a team past its storage quota gets 413 before the body is read; known blobs and re-sent PUTs do not refresh their lease")
    func quotaAndLease() async throws {
        let server = try await TestServer.start { $0.teamQuotaBytes = 1000 }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let first = Data(repeating: 1, count: 600), second = Data(repeating: 2, count: 600)
        let key = try await world.key(in: "T")
        let sealed = Data(try SealedModel.seal(Array(first), name: "a", using: .modelKey(key)))
        let sealedAddress = sealed.sha256Hex
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(sealedAddress)", body: sealed).status == 201)
        let more = Data(try SealedModel.seal(Array(second), name: "b", using: .modelKey(key)))
        let moreAddress = more.sha256Hex
        let refused = try await world.admin.call("PUT", "/v1/teams/T/blobs/\(moreAddress)", body: more)
        #expect(refused.status == 413)
        #expect(refused.errorCode == "quota_exceeded")
        #expect(refused.text.contains("COFFER_TEAM_QUOTA_BYTES"))
        // The blob it already holds costs nothing, and sending it again does not restart its grace period.
        let before = try await server.app.db.query(BlobRecord.self).filter(\.$id == sealedAddress).first()?.lastUploadedAt
        try await Task.sleep(for: .milliseconds(20))
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(sealedAddress)", body: sealed).status == 200)
        let after = try await server.app.db.query(BlobRecord.self).filter(\.$id == sealedAddress).first()?.lastUploadedAt
        #expect(before != nil)
        #expect(before == after)
    }

    @Test("a team at its quota replaces a damaged copy of its blob through the API, its bytes counted already; the dashboard, which reserves before it knows the bytes, refuses it")
    func quotaAndDamage() async throws {
        let server = try await TestServer.start { $0.teamQuotaBytes = 1000 }
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let sealed = Data(try SealedModel.seal(Array(Data(repeating: 3, count: 600)), name: "a", using: .modelKey(flowers.key)))
        let address = sealed.sha256Hex
        #expect(try await flowers.admin.call("PUT", "/v1/teams/T/blobs/\(address)", body: sealed).status == 201)
        let path = server.configuration.resolvedBlobDirectoryForTests + "/" + address.prefix(2) + "/" + address
        let browser = try await DashboardTests.ownerBrowser(server)
        for damage in ["tail lost", "file lost"] {
            // The disk loses the blob's tail, or all of it: the team's 1000 bytes still count its full size.
            if damage == "tail lost" {
                try sealed.prefix(100).write(to: URL(fileURLWithPath: path))
            } else {
                try FileManager.default.removeItem(atPath: path)
            }
            let reply = try await flowers.admin.call("PUT", "/v1/teams/T/blobs/\(address)", body: sealed)
            // Before: counted twice, 413 quota_exceeded, and the damage stayed.
            #expect(reply.status == 201 || reply.status == 200, "\(damage): \(reply.status) \(reply.text)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == sealed, "\(damage)")
        }
        // The dashboard learns the address from the bytes only: it reserves their stated size first,
        // which a team at its quota does not have, even for a blob it holds. Refused before its
        // body is read (the API, which names the blob first, repairs it).
        try sealed.prefix(100).write(to: URL(fileURLWithPath: path))
        let dashboard = try await DashboardDeploymentTests.scriptUpload(browser, model: "FlowerClassifier", sealed)
        #expect(dashboard.status == 413, "\(dashboard.text)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == sealed.prefix(100))
        #expect(try await flowers.admin.call("PUT", "/v1/teams/T/blobs/\(address)", body: sealed).status == 201)
        #expect(try await UploadLeaseRecord.query(on: server.app.db).count() == 0)
        // A new blob still does not fit.
        let more = Data(try SealedModel.seal(Array(Data(repeating: 4, count: 600)), name: "b", using: .modelKey(flowers.key)))
        #expect(try await flowers.admin.call("PUT", "/v1/teams/T/blobs/\(more.sha256Hex)", body: more).errorCode == "quota_exceeded")
        #expect(try await DashboardDeploymentTests.scriptUpload(browser, model: "FlowerClassifier", more).status == 413)
        // A refusal under the lease leaves no lease behind.
        #expect(try await UploadLeaseRecord.query(on: server.app.db).count() == 0)
    }
}
