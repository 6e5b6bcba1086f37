import BlockingTestSupport
import CofferFormat
import CofferServer
import Foundation
import Testing

/// `POST /v1/device/reports` against hostile callers: every refusal is a clear 4xx and changes no
/// count; retries count once; mutated bodies never get a 5xx.
@Suite("Device reports")
struct ReportIntakeTests {
    @Test("oversized, malformed, wrong-team, unbound, unknown-deployment and flooding reports are refused and change no counts")
    func hostile() async throws {
        let server = try await TestServer.start { configuration in
            RolloutTests.fast(&configuration)
            configuration.reportEventsPerDevicePerMinute = 30
            configuration.reportsPerAppPerMinute = 60
        }
        defer { Task { try? await server.stop() } }
        try await server.app.asyncBoot()
        let fleet = Fleet(try await Flowers.make(server))
        let spring = try await fleet.deployment("spring")
        #expect(try await fleet.flowers.activate(spring).status == 200)
        let draft = try await fleet.deployment("draft")
        let manifest = try #require(try await fleet.manifests()["device-0"])
        func valid(_ device: String = "device-0") -> [String: Any] { Fleet.event(manifest, device: device, outcome: "failed", reason: "boom") }
        func with(_ changes: [String: Any?]) -> [String: Any] {
            var event = valid()
            for (key, value) in changes { event[key] = value }
            return event
        }

        // Shape: each answer names the event and field.
        let malformed: [([String: Any], String)] = [
            (with(["id": "short"]), "id"), (with(["id": String(repeating: "a", count: 65)]), "id"), (with(["id": "with space!"]), "id"),
            (with(["deviceID": ""]), "deviceID"), (with(["deviceID": "a|b"]), "deviceID"), (with(["deviceID": "a\u{202E}b"]), "deviceID"),
            (with(["deviceID": String(repeating: "d", count: 201)]), "deviceID"), (with(["sequence": -1]), "sequence"),
            (with(["deployment": "not-a-uuid"]), "deployment"), (with(["sha256": "ABC"]), "sha256"), (with(["outcome": "exploded"]), "outcome"),
            (with(["reason": String(repeating: "r", count: 201)]), "reason"), (with(["reason": "line\nbreak"]), "reason"),
            (with(["outcome": "loaded"]), "reason"), (with(["at": "yesterday"]), "at"),
            (with(["at": ISO8601DateFormatter().string(from: Date().addingTimeInterval(7200))]), "at"), (with(["model": ""]), "model"),
        ]
        for (event, field) in malformed {
            let reply = try await fleet.report([valid("device-1"), event])
            #expect(reply.status == 400 && reply.text.contains("event 1: \(field)"), "\(field): \(reply.text)")
        }
        #expect(try await fleet.report([]).status == 400)
        #expect(try await fleet.report(Array(repeating: valid(), count: 101)).status == 400)
        let big = try await fleet.report([with(["reason": String(repeating: "r", count: 70_000)])])
        #expect(big.status == 413, "\(big.text)")
        let notJSON = try await HTTP(base: server.base).call("POST", "/v1/device/reports", body: Data("{\"events\": [".utf8),
                                                             headers: ["Authorization": Self.basic(fleet.flowers.app), "Content-Type": "application/json"])
        #expect(notJSON.status == 400, "\(notJSON.text)")

        // Who: no credential, a wrong one, another team's app, an app not bound to the collection.
        let anonymous = try await HTTP(base: server.base).call("POST", "/v1/device/reports", json: ["events": [valid()]])
        #expect(anonymous.status == 401)
        #expect(try await fleet.report([valid()], app: (fleet.flowers.app.id, "cfa_wrong")).status == 401)
        try await fleet.flowers.world.team("U")
        let outsider = try await fleet.flowers.world.app(in: "U")
        let other = try await fleet.report([valid()], app: outsider)
        #expect(other.status == 403 && other.errorCode == "collection_not_bound", "\(other.text)")
        let unbound = try await fleet.flowers.world.app(in: "T", name: "Unbound")
        #expect(try await fleet.report([valid()], app: unbound).errorCode == "collection_not_bound")
        // An app of team U bound to a collection of the same name: T's deployment is unknown to it.
        let created = try await fleet.flowers.admin.call("POST", "/v1/teams/U/collections", json: ["identifier": "FlowerModels", "models": ["FlowerClassifier"]])
        #expect(created.status == 201)
        try await fleet.flowers.world.bind(outsider.id, in: "U", to: ["FlowerModels"])
        let crossTeam = try await fleet.report([valid()], app: outsider)
        #expect(crossTeam.status == 422 && crossTeam.errorCode == "unknown_deployment", "\(crossTeam.text)")

        // What: an unknown deployment, a draft, a model the deployment does not have.
        #expect(try await fleet.report([with(["deployment": UUID().uuidString])]).errorCode == "unknown_deployment")
        #expect(try await fleet.report([with(["deployment": draft])]).errorCode == "unknown_deployment")
        #expect(try await fleet.report([with(["model": "Nope"])]).errorCode == "unknown_model")
        #expect(try await fleet.report([with(["collection": "Other"])]).errorCode == "collection_not_bound")
        // A SHA-256 no version of the model in that deployment has (made-up failures of any model).
        #expect(try await fleet.report([with(["sha256": String(repeating: "ab", count: 32)])]).errorCode == "unknown_model")
        let stylizer = try #require(manifest.models["FlowerStylizer"]?.sha256)
        #expect(try await fleet.report([with(["sha256": stylizer])]).errorCode == "unknown_model", "another model's SHA-256")

        // Nothing above counted.
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await fleet.status(spring)["devices"] as? Int == 0)

        // A retry counts once; one device's flood is cut at its budget (30 events a minute).
        let batch = (0..<10).map { _ in valid("device-2") }
        let accepted = try await fleet.report(batch)
        #expect(accepted.status == 200 && accepted.object["accepted"] as? Int == 10)
        let retried = try await fleet.report(batch)
        #expect(retried.status == 200 && retried.object["accepted"] as? Int == 0 && retried.object["duplicates"] as? Int == 10, "\(retried.text)")
        #expect(try await fleet.report((0..<10).map { _ in valid("device-2") }).status == 200)
        let flood = try await fleet.report((0..<10).map { _ in valid("device-2") })
        #expect(flood.status == 429 && flood.header("Retry-After") != nil, "\(flood.text)")
        let status = try await fleet.waitForStatus(spring) { $0["devices"] as? Int == 1 }
        #expect(status["devices"] as? Int == 1 && (status["outcomes"] as? [String: Int])?["failed"] == 1, "\(status)")

        // The app's budget: 60 batches a minute in all (some were used above).
        var limited = false
        for index in 0..<60 where !limited {
            limited = try await fleet.report([valid("flood-\(index)")]).status == 429
        }
        #expect(limited)
    }

    @Test("mutated report bodies get 200, 400, 413 or 422, never a 5xx, and the server keeps answering")
    func mutations() async throws {
        let server = try await TestServer.start(adjust: RolloutTests.fast)
        defer { Task { try? await server.stop() } }
        try await server.app.asyncBoot()
        let fleet = Fleet(try await Flowers.make(server))
        let spring = try await fleet.deployment("spring")
        #expect(try await fleet.flowers.activate(spring).status == 200)
        let manifest = try #require(try await fleet.manifests()["device-0"])
        let seed = Array(try JSONSerialization.data(withJSONObject: ["events": [
            Fleet.event(manifest, device: "device-0", outcome: "failed", reason: "oom"),
            Fleet.event(manifest, device: "device-1", model: "FlowerStylizer", outcome: "loaded"),
        ]]))
        var generator = SplitMix64(state: 0x16)
        let tokens = Array("{}[]\",:0-9eE.\\u\u{0}\u{7F}".utf8) + Array("9999999999999999999999".utf8)
        for round in 0..<300 {
            var body = seed
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let at = Int.random(in: 0..<body.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: body[at] = tokens.randomElement(using: &generator)!
                case 1: body.remove(at: at)
                case 2: body.insert(UInt8.random(in: 0...255, using: &generator), at: at)
                default: body.insert(contentsOf: body[at..<min(body.count, at + 64)], at: at)
                }
            }
            let reply = try await HTTP(base: server.base).call(
                "POST", "/v1/device/reports", body: Data(body),
                headers: ["Authorization": Self.basic(fleet.flowers.app), "Content-Type": "application/json"])
            #expect([200, 400, 403, 413, 422, 429].contains(reply.status), "round \(round): \(reply.status) \(reply.text)")
        }
        #expect(try await HTTP(base: server.base).call("GET", "/healthz").status == 200)
    }

    static func basic(_ app: (id: String, credential: String)) -> String {
        "Basic " + Data("\(app.id):\(app.credential)".utf8).base64EncodedString()
    }
}
