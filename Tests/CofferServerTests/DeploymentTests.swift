import CofferFormat
@testable import CofferServer
import Crypto
import Fluent
import Foundation
import Testing

/// Collections, deployments, activation, rollback and signed manifests, through the real HTTP
/// interface over SQLite and PostgreSQL.
@Suite("Deployments and manifests")
struct DeploymentTests {
    /// The WWDC demo: deploy to all, add a tablet-only classifier, roll back; every device
    /// population sees what it should, signed, with the sequence number growing.
    static func walkThrough(_ backend: Backend, store: TestStore) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres, store: store)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let classifier = try await flowers.upload("classifier")
        let stylizer = try await flowers.upload("stylizer")
        let tabletClassifier = try await flowers.upload("classifier-tablet")
        let phone = ["deviceID": "phone-1", "deviceClass": "phone", "osName": "iOS", "osVersion": "17.4"]
        let tablet = ["deviceID": "tablet-1", "deviceClass": "tablet", "osName": "iPadOS", "osVersion": "17.4"]

        // No active deployment yet: devices get 404.
        #expect(try await flowers.manifest(phone).status == 404)

        let (first, reply) = try await flowers.deployment("all devices", models: ["FlowerClassifier": classifier, "FlowerStylizer": stylizer])
        #expect(reply.status == 201, "\(reply.text)")
        #expect(reply.object["status"] as? String == "draft")
        #expect((reply.object["problems"] as? [String])?.isEmpty == true)
        let activated = try await flowers.activate(try #require(first))
        #expect(activated.status == 200, "\(activated.text)")
        #expect(activated.object["status"] as? String == "active")

        let m1 = try await flowers.verifiedManifest(phone)
        #expect(m1.sequence == 1)
        #expect(m1.deploymentID == first?.lowercased())
        #expect(m1.collection == "FlowerModels")
        #expect(m1.models["FlowerClassifier"]?.sha256 == classifier)
        #expect(m1.models["FlowerStylizer"]?.sha256 == stylizer)
        #expect(m1.models["FlowerClassifier"]?.keyID == flowers.key.id)
        #expect(m1.models["FlowerClassifier"]?.url == "/v1/blobs/\(classifier)")
        #expect(m1.expiresAt.timeIntervalSince(m1.issuedAt) == 7 * 24 * 3600)
        #expect(m1.expiresAt > Date().addingTimeInterval(5 * 24 * 3600))

        // The blob behind a manifest entry downloads and has the stated hash and size.
        let blob = try await HTTP(base: server.base).call("GET", m1.models["FlowerClassifier"]!.url)
        #expect(blob.body.sha256Hex == classifier && Int64(blob.body.count) == m1.models["FlowerClassifier"]!.size)

        // A clone with a tablet-only classifier.
        let clone = try await flowers.admin.call("POST", Flowers.base + "/deployments/\(first!)/clone", json: [
            "name": "tablets", "rules": [["condition": "deviceClass=tablet", "models": ["FlowerClassifier": tabletClassifier]]]])
        #expect(clone.status == 201, "\(clone.text)")
        let second = try #require(clone.object["id"] as? String)
        #expect(try await flowers.activate(second).status == 200)
        let m2Phone = try await flowers.verifiedManifest(phone)
        let m2Tablet = try await flowers.verifiedManifest(tablet)
        #expect(m2Phone.sequence == 2 && m2Tablet.sequence == 2)
        #expect(m2Phone.models["FlowerClassifier"]?.sha256 == classifier)
        #expect(m2Phone.target == "default")
        #expect(m2Tablet.models["FlowerClassifier"]?.sha256 == tabletClassifier)
        #expect(m2Tablet.models["FlowerStylizer"]?.sha256 == stylizer)
        #expect(m2Tablet.target == "rule 1")

        // The first deployment was archived by the activation; exactly one is active.
        let list = try await flowers.admin.call("GET", Flowers.base + "/deployments")
        #expect(list.array.map { $0["status"] as? String } == ["archived", "active"])

        // Roll back: the tablet gets the default again, with a higher sequence number.
        let rollback = try await flowers.admin.call("POST", Flowers.base + "/rollback")
        #expect(rollback.status == 200, "\(rollback.text)")
        #expect(rollback.object["id"] as? String == first)
        let m3Tablet = try await flowers.verifiedManifest(tablet)
        #expect(m3Tablet.sequence == 3)
        #expect(m3Tablet.models["FlowerClassifier"]?.sha256 == classifier)
        #expect(m3Tablet.deploymentID == first?.lowercased())

        // History: who activated what, newest first.
        let history = try await flowers.admin.call("GET", Flowers.base + "/activations")
        #expect(history.array.map { $0["sequence"] as? Int } == [3, 2, 1])
        #expect(history.array.map { $0["kind"] as? String } == ["rollback", "activate", "activate"])
        #expect(history.array.allSatisfy { $0["actor"] as? String == "admin" })
        let collection = try await flowers.admin.call("GET", Flowers.base)
        #expect(collection.object["sequence"] as? Int == 3)
        #expect(collection.object["activeDeploymentID"] as? String == first)

        // The deployments keep their blobs from being collected.
        let held = try await BlobReferenceRecord.query(on: server.app.db).all()
        #expect(Set(held.map(\.blobID)) == [classifier, stylizer, tabletClassifier])
    }

    @Test("the WWDC walk-through over SQLite", arguments: TestStore.available)
    func walkThroughSQLite(store: TestStore) async throws { try await Self.walkThrough(.sqlite, store: store) }

    @Test("the WWDC walk-through over PostgreSQL", .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"),
          arguments: TestStore.available)
    func walkThroughPostgres(store: TestStore) async throws { try await Self.walkThrough(.postgres, store: store) }

    /// Many activations of one collection at once: each gets its own sequence number and exactly
    /// one deployment ends active — the one with the highest number.
    static func concurrentActivations(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        var ids: [String] = []
        for index in 0..<8 {
            let models = ["FlowerClassifier": try await flowers.upload("c\(index)"), "FlowerStylizer": try await flowers.upload("s\(index)")]
            ids.append(try #require(try await flowers.deployment("d\(index)", models: models).id))
        }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for id in ids { group.addTask { try await flowers.activate(id).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        let list = try await flowers.admin.call("GET", Flowers.base + "/deployments").array
        let active = list.filter { $0["status"] as? String == "active" }
        #expect(active.count == 1)
        let history = try await flowers.admin.call("GET", Flowers.base + "/activations").array
        #expect(history.compactMap { $0["sequence"] as? Int }.sorted() == Array(1...8))
        #expect(history.first?["deploymentID"] as? String == active.first?["id"] as? String)
        let collection = try await flowers.admin.call("GET", Flowers.base).object
        #expect(collection["sequence"] as? Int == 8)
        #expect(collection["activeDeploymentID"] as? String == active.first?["id"] as? String)
        let manifest = try await flowers.verifiedManifest(["deviceID": "d"])
        #expect(manifest.sequence == 8)
        #expect(manifest.deploymentID == (active.first?["id"] as? String)?.lowercased())
    }

    @Test("concurrent activations are atomic (SQLite)")
    func concurrentSQLite() async throws { try await Self.concurrentActivations(.sqlite) }

    @Test("concurrent activations are atomic (PostgreSQL)", .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func concurrentPostgres() async throws { try await Self.concurrentActivations(.postgres) }

    @Test("a deployment that misses a model, holds a damaged container or uses a revoked key is not activated")
    func readiness() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let classifier = try await flowers.upload("classifier")
        let stylizer = try await flowers.upload("stylizer")

        let (partial, draft) = try await flowers.deployment("partial", models: ["FlowerClassifier": classifier])
        #expect(draft.status == 201)
        #expect((draft.object["problems"] as? [String]) == ["no default model for FlowerStylizer"])
        let refused = try await flowers.activate(try #require(partial))
        #expect(refused.status == 409)
        #expect(refused.errorCode == "not_ready")
        #expect(refused.text.contains("no default model for FlowerStylizer"))

        // Editing the draft fixes it.
        let edited = try await flowers.admin.call("PATCH", Flowers.base + "/deployments/\(partial!)", json: ["models": ["FlowerStylizer": stylizer]])
        #expect(edited.status == 200, "\(edited.text)")
        #expect((edited.object["problems"] as? [String])?.isEmpty == true)

        // Unknown names, unknown blobs, non-containers and bad rules are refused when saved.
        #expect(try await flowers.deployment("x", models: ["Nope": classifier]).reply.status == 400)
        #expect(try await flowers.deployment("x", models: ["FlowerClassifier": String(repeating: "0", count: 64)]).reply.errorCode == "unknown_blob")
        #expect(try await flowers.deployment("x", models: ["FlowerClassifier": "xyz"]).reply.status == 400)
        #expect(try await flowers.deployment("partial", models: [:]).reply.status == 409)
        let noModels = try await flowers.deployment("x", models: [:], rules: [["condition": "deviceClass=tablet", "models": [:] as [String: String]]])
        #expect(noModels.reply.errorCode == "invalid_rule")

        // A container damaged on the server's disk shows as a problem and blocks activation.
        let store = try FolderBlobStore(root: server.configuration.resolvedBlobDirectoryForTests)
        let handle = try #require(FileHandle(forUpdatingAtPath: store.path(of: stylizer)))
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: Data([0]))
        try handle.close()
        let damaged = try await flowers.activate(partial!)
        #expect(damaged.status == 409)
        #expect(damaged.text.contains("not a valid Coffer container"))

        // A revoked key blocks activation too.
        let fresh = try await flowers.upload("stylizer-2")
        #expect(try await flowers.admin.call("PATCH", Flowers.base + "/deployments/\(partial!)", json: ["models": ["FlowerStylizer": fresh]]).status == 200)
        #expect(try await flowers.activate(partial!).status == 200)
        #expect(try await flowers.admin.call("DELETE", "/v1/keys/\(flowers.key.id)").status == 204)
        let clone = try await flowers.admin.call("POST", Flowers.base + "/deployments/\(partial!)/clone", json: ["name": "after revocation"])
        let blocked = try await flowers.activate(try #require(clone.object["id"] as? String))
        #expect(blocked.status == 409)
        #expect(blocked.text.contains("revoked"))

        // Active and archived deployments do not change; the active one cannot be archived;
        // a model name the active deployment uses cannot be removed.
        #expect(try await flowers.admin.call("PATCH", Flowers.base + "/deployments/\(partial!)", json: ["name": "renamed"]).status == 409)
        #expect(try await flowers.admin.call("POST", Flowers.base + "/deployments/\(partial!)/archive").status == 409)
        #expect(try await flowers.admin.call("DELETE", Flowers.base + "/models/FlowerStylizer").status == 409)
        let added = try await flowers.admin.call("POST", Flowers.base + "/models", json: ["name": "FlowerSegmenter"])
        #expect(added.object["models"] as? [String] == ["FlowerClassifier", "FlowerStylizer", "FlowerSegmenter"])
        let removed = try await flowers.admin.call("DELETE", Flowers.base + "/models/FlowerSegmenter")
        #expect(removed.object["models"] as? [String] == ["FlowerClassifier", "FlowerStylizer"])
    }

    @Test("manifests: ETag and 304, device authentication, attributes, and another team's apps see nothing")
    func deviceAccess() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let models = ["FlowerClassifier": try await flowers.upload("c"), "FlowerStylizer": try await flowers.upload("s")]
        let id = try #require(try await flowers.deployment("v1", models: models).id)
        #expect(try await flowers.activate(id).status == 200)
        let device = ["deviceID": "d-1", "deviceClass": "phone"]

        let first = try await flowers.manifest(device)
        let etag = try #require(first.header("ETag"))
        #expect(etag.hasPrefix("\"") && etag.count == 34)
        let second = try await flowers.manifest(device)
        #expect(second.body == first.body, "the same manifest is not re-signed per request")
        let notModified = try await flowers.manifest(device, etag: etag)
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
        #expect(try await flowers.manifest(device, etag: "\"other\"").status == 200)

        // A new activation changes the answer, and the old ETag no longer matches.
        let clone = try await flowers.admin.call("POST", Flowers.base + "/deployments/\(id)/clone", json: ["name": "v2"])
        #expect(try await flowers.activate(try #require(clone.object["id"] as? String)).status == 200)
        let changed = try await flowers.manifest(device, etag: etag)
        #expect(changed.status == 200)
        #expect(changed.header("ETag") != etag)

        // Authentication and attributes.
        #expect(try await flowers.manifest(device, app: (flowers.app.id, "cfa_wrong")).status == 401)
        #expect(try await flowers.manifest(device, app: (UUID().uuidString, flowers.app.credential)).status == 401)
        let anonymous = try await HTTP(base: server.base).call("GET", "/v1/device/collections/FlowerModels/manifest?deviceID=x")
        #expect(anonymous.status == 401)
        #expect(try await flowers.manifest([:]).status == 400)
        #expect(try await flowers.manifest(["deviceID": "d", "memoryGiB": "lots"]).status == 400)
        // A collection the app is not bound to (here: none such) is 403, whether it exists or not.
        #expect(try await flowers.manifest(device, collection: "NoSuchModels").errorCode == "collection_not_bound")
        // A path that names no possible collection (here a right-to-left override) is refused before
        // anything is looked up, and nothing of it reaches the team's audit log.
        let auditedBefore = try await AuditRecord.query(on: server.app.db).count()
        for path in ["%E2%80%AEfdp.exe", "a%0Ab", String(repeating: "a", count: 101)] {
            #expect(try await flowers.manifest(device, collection: path).errorCode == "invalid_request", "\(path)")
            #expect(try await flowers.manifest(device, app: (flowers.app.id, "cfa_wrong"), collection: path).status == 400, "\(path)")
        }
        #expect(try await AuditRecord.query(on: server.app.db).count() == auditedBefore)

        // Another team's app cannot see this team's collection; a revoked app gets 403.
        try await flowers.world.team("Other")
        let other = try await flowers.world.app(in: "Other")
        let foreign = try await flowers.manifest(device, app: other)
        #expect(foreign.status == 403)
        #expect(!foreign.text.contains(models["FlowerClassifier"]!))
        #expect(try await flowers.admin.call("DELETE", "/v1/teams/T/apps/\(flowers.app.id)").status == 204)
        let revoked = try await flowers.manifest(device)
        #expect(revoked.status == 403)
        #expect(revoked.errorCode == "app_revoked")
    }

    @Test("the device listener answers exactly as the main port does, from the same caches")
    func deviceListener() async throws {
        let server = try await TestServer.start { $0.devicePort = 0 }
        defer { Task { try? await server.stop() } }
        let port = try #require(server.app.storage[DeviceListener.Key.self]?.port)
        let lean = try #require(URL(string: "http://127.0.0.1:\(port)"))
        let flowers = try await Flowers.make(server)
        let models = ["FlowerClassifier": try await flowers.upload("c"), "FlowerStylizer": try await flowers.upload("s")]
        let tablet = try await flowers.upload("t")
        let id = try #require(try await flowers.deployment("v1", models: models, rules: [
            ["condition": "deviceClass=tablet", "models": ["FlowerClassifier": tablet]]]).id)
        let device = ["deviceID": "d-1", "deviceClass": "tablet"]

        // Before activation: 404 on both.
        #expect(try await flowers.manifest(device, base: lean).status == 404)
        #expect(try await flowers.activate(id).status == 200)

        // The same bytes, ETag and verdicts as the main port, cold cache and warm.
        let fromLean = try await flowers.manifest(device, base: lean)
        let fromMain = try await flowers.manifest(device)
        #expect(fromLean.status == 200, "\(fromLean.text)")
        #expect(fromLean.body == fromMain.body)
        #expect(fromLean.header("ETag") == fromMain.header("ETag"))
        #expect(fromLean.header("Cache-Control") == "private, no-cache")
        let manifest = try SignedManifest.verify(fromLean.body, using: try await flowers.signingKey())
        #expect(manifest.models["FlowerClassifier"]?.sha256 == tablet)
        let notModified = try await flowers.manifest(device, etag: fromLean.header("ETag"), base: lean)
        #expect(notModified.status == 304 && notModified.body.isEmpty)

        // Refusals, with the API's error bodies.
        #expect(try await flowers.manifest(device, app: (flowers.app.id, "cfa_wrong"), base: lean).errorCode == "invalid_credential")
        #expect(try await HTTP(base: lean).call("GET", "/v1/device/collections/FlowerModels/manifest?deviceID=x").status == 401)
        #expect(try await flowers.manifest(["deviceID": "d", "memoryGiB": "lots"], base: lean).errorCode == "invalid_request")
        #expect(try await flowers.manifest(device, collection: "Nope", base: lean).errorCode == "collection_not_bound")
        #expect(try await flowers.manifest(device, collection: "%E2%80%AEfdp.exe", base: lean).errorCode == "invalid_request")
        #expect(try await HTTP(base: lean).call("GET", "/v1/teams").status == 404)
        #expect(try await HTTP(base: lean).call("POST", "/v1/device/collections/FlowerModels/manifest?deviceID=x", json: [:]).status == 404)

        // Many requests at once over several connections, all answered.
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<64 { group.addTask { try await flowers.manifest(["deviceID": "d-\(index)"], base: lean).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 200 })

        // A revoked app is refused at once.
        #expect(try await flowers.admin.call("DELETE", "/v1/teams/T/apps/\(flowers.app.id)").status == 204)
        #expect(try await flowers.manifest(device, base: lean).errorCode == "app_revoked")
    }

    @Test("another team can neither see nor use this team's collections, keys or blobs")
    func teamIsolation() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let outsider = try await flowers.world.member("outsider", role: "developer", in: "T")
        #expect(try await flowers.admin.call("DELETE", "/v1/teams/T/members/outsider").status == 204)
        #expect(try await outsider.call("POST", "/v1/teams", json: ["name": "X"]).status == 201)
        let xKey = try ModelKey(fileRepresentation: try await outsider.call("POST", "/v1/teams/X/keys", json: ["name": "x"]).body)
        #expect(try await outsider.call("GET", Flowers.base + "/deployments").status == 403)
        #expect(try await outsider.call("GET", "/v1/collections").array.isEmpty)

        // A model sealed with team X's key cannot go into team T's deployment.
        let foreignBlob = try await flowers.upload("foreign", key: xKey)
        let refused = try await flowers.deployment("x", models: ["FlowerClassifier": foreignBlob])
        #expect(refused.reply.errorCode == "foreign_key")

        // Passphrase-sealed containers are refused: devices could never get their key.
        var cheap = SealedModel.Options()
        cheap.passphraseLogN = 10
        let sealed = Data(try SealedModel.seal(Array("p".utf8), name: "p", using: .passphrase(Array("correct horse".utf8)), options: cheap))
        #expect(try await flowers.admin.call("PUT", "/v1/teams/T/blobs/\(sealed.sha256Hex)", body: sealed).status == 201)
        #expect(try await flowers.deployment("p", models: ["FlowerClassifier": sealed.sha256Hex]).reply.errorCode == "passphrase_container")
    }

    @Test("rules over HTTP: first match wins, versions compare as versions, rollouts are stable and grow monotonically")
    func targeting() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let c = try await flowers.upload("default"), s = try await flowers.upload("stylizer")
        let new17 = try await flowers.upload("ios-17.10"), tablet = try await flowers.upload("tablet"), improved = try await flowers.upload("improved")
        let rules: [[String: Any]] = [
            ["condition": "osName=iOS; osVersion>=17.10", "models": ["FlowerClassifier": new17]],
            ["condition": "deviceClass=tablet", "models": ["FlowerClassifier": tablet]],
            ["condition": "rollout=10", "models": ["FlowerClassifier": improved]],
        ]
        let (id, reply) = try await flowers.deployment("targeted", models: ["FlowerClassifier": c, "FlowerStylizer": s], rules: rules)
        #expect(reply.status == 201, "\(reply.text)")
        #expect(try await flowers.activate(try #require(id)).status == 200)

        func classifier(_ attributes: [String: String]) async throws -> String? {
            try await flowers.verifiedManifest(attributes).models["FlowerClassifier"]?.sha256
        }
        // 17.10 > 17.9; the first matching rule wins (an iOS 17.10 tablet gets the iOS rule).
        #expect(try await classifier(["deviceID": "a", "osName": "iOS", "osVersion": "17.10", "deviceClass": "tablet"]) == new17)
        #expect(try await classifier(["deviceID": "a", "osName": "iOS", "osVersion": "17.9", "deviceClass": "tablet"]) == tablet)
        #expect(try await classifier(["deviceID": "a", "osName": "ios", "osVersion": "18"]) == new17)

        // The rollout rule: about 10 % of devices, the same ones every time.
        let devices = (0..<400).map { "device-\($0)" }
        var first: Set<String> = []
        for device in devices where try await classifier(["deviceID": device, "deviceClass": "phone"]) == improved { first.insert(device) }
        #expect((16...64).contains(first.count), "\(first.count) of 400 devices in a 10 % rollout")
        for device in first.prefix(20) { #expect(try await classifier(["deviceID": device, "deviceClass": "phone"]) == improved) }

        // Raised to 20 % in a clone (which keeps the rollout seed): the first 10 % stay in.
        let raised = try await flowers.admin.call("POST", Flowers.base + "/deployments/\(id!)/clone", json: [
            "name": "20 percent", "rules": Array(rules.prefix(2)) + [["condition": "rollout=20", "models": ["FlowerClassifier": improved]]]])
        #expect(raised.status == 201, "\(raised.text)")
        #expect(try await flowers.activate(try #require(raised.object["id"] as? String)).status == 200)
        var second: Set<String> = []
        for device in devices where try await classifier(["deviceID": device, "deviceClass": "phone"]) == improved { second.insert(device) }
        #expect(first.isSubset(of: second))
        #expect((second.count - first.count) >= 16, "\(second.count) of 400 devices at 20 %")

        // Invalid rules are refused when saved, with the reason.
        let bad = try await flowers.deployment("bad", models: ["FlowerClassifier": c], rules: [["condition": "osVersion>=17.x", "models": ["FlowerClassifier": c]]])
        #expect(bad.reply.status == 422)
        #expect(bad.reply.errorCode == "invalid_rule")
        #expect(bad.reply.text.contains("rule 1"))
        // Activating what is already active changes nothing.
        let sequence = try await flowers.verifiedManifest(["deviceID": "x"]).sequence
        #expect(try await flowers.activate(try #require(raised.object["id"] as? String)).status == 200)
        #expect(try await flowers.verifiedManifest(["deviceID": "x"]).sequence == sequence)
    }

    @Test("manifests verify only with the server's key, and expire")
    func signatures() async throws {
        let server = try await TestServer.start { $0.manifestLifetime = 8 }
        let flowers = try await Flowers.make(server)
        let models = ["FlowerClassifier": try await flowers.upload("c"), "FlowerStylizer": try await flowers.upload("s")]
        let id = try #require(try await flowers.deployment("v1", models: models).id)
        #expect(try await flowers.activate(id).status == 200)
        let asked = Date()
        let envelope = try await flowers.manifest(["deviceID": "d"]).body
        let key = try await flowers.signingKey()

        let manifest = try SignedManifest.verify(envelope, using: key)
        #expect(manifest.expiresAt.timeIntervalSince(manifest.issuedAt) == 8)
        // Against the moment it was asked for, not the moment this line runs (a loaded machine).
        #expect(manifest.expiresAt.timeIntervalSince(asked) > 5, "at least three quarters of the lifetime is left when served")
        #expect(throws: ManifestError.expired) { try SignedManifest.verify(envelope, using: key, now: Date().addingTimeInterval(9)) }
        #expect(throws: ManifestError.badSignature) { try SignedManifest.verify(envelope, using: Curve25519.Signing.PrivateKey().publicKey) }

        // Any change to the payload breaks the signature.
        var object = try #require(try JSONSerialization.jsonObject(with: envelope) as? [String: Any])
        var payload = try #require(Data(base64Encoded: object["payload"] as? String ?? ""))
        payload[payload.count / 2] ^= 1
        object["payload"] = payload.base64EncodedString()
        let tampered = try JSONSerialization.data(withJSONObject: object)
        #expect(throws: ManifestError.badSignature) { try SignedManifest.verify(tampered, using: key) }

        // The key survives a restart, and coffer-server public-key reports the same key.
        try await server.stop(removingData: false)
        let (keyID, publicKey) = try await Server.signingPublicKey(server.configuration)
        #expect(publicKey == key.rawRepresentation.base64EncodedString())
        #expect(keyID == SignedManifest.keyID(of: key))
        let again = try await TestServer.start(server.configuration)
        #expect(try await Flowers(world: World(again), app: flowers.app, key: flowers.key).signingKey().rawRepresentation == key.rawRepresentation)
        try await again.stop()
    }
}
