import CofferFormat
import CofferServer
import Foundation
import Testing

/// Staged activations over HTTP: a stage reaches its share of devices, failing devices halt it by
/// themselves and every device goes back, a healthy one advances to 100 % on its timer; on SQLite,
/// PostgreSQL and two instances sharing PostgreSQL (each change happens exactly once).
@Suite("Health-gated rollouts")
struct RolloutTests {
    /// Reports written and gates checked several times a second.
    static func fast(_ configuration: inout ServerConfiguration) {
        configuration.reportFlushInterval = 0.1
        configuration.rolloutCheckInterval = 0.2
    }

    @Test("a 50 % stage reaches about half of 40 devices, halts itself when they fail, and a healthy one advances to all (SQLite)")
    func sqlite() async throws { try await Self.haltThenAdvance(.sqlite) }

    @Test("a 50 % stage reaches about half of 40 devices, halts itself when they fail, and a healthy one advances to all (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.haltThenAdvance(.postgres) }

    static func haltThenAdvance(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres, adjust: fast)
        defer { Task { try? await server.stop() } }
        try await server.app.asyncBoot()  // starts the periodic flush and gate checks
        let fleet = Fleet(try await Flowers.make(server))
        let spring = try await fleet.deployment("spring")
        #expect(try await fleet.flowers.activate(spring).status == 200)
        let springSequence = try await fleet.manifests().values.first?.sequence ?? 0

        // Stage 1 of summer: 50 %, no timer in reach.
        let summer = try await fleet.deployment("summer")
        let staged = try await fleet.stage(summer, ["stages": [50, 100], "stageHours": 1000, "haltAt": 10, "minReports": 5])
        #expect(staged.status == 200, "\(staged.text)")
        #expect((staged.object["rollout"] as? [String: Any])?["state"] as? String == "staged")
        let before = try await fleet.manifests()
        let onSummer = before.filter { $0.value.deploymentID == summer }.map(\.key).sorted()
        #expect((10...30).contains(onSummer.count), "a 50 % stage reaches about half of 40 devices, not \(onSummer.count)")
        #expect(before.values.allSatisfy { $0.deploymentID == summer || $0.deploymentID == spring })
        #expect(before.values.allSatisfy { $0.sequence == springSequence + 1 })
        #expect(try await fleet.manifests().mapValues(\.deploymentID) == before.mapValues(\.deploymentID), "each device keeps its side")

        // Devices on spring are healthy; the ones on summer fail to load its classifier.
        let healthy = before.filter { $0.value.deploymentID == spring }.map { Fleet.event($0.value, device: $0.key, outcome: "loaded") }
        #expect(try await fleet.report(healthy).status == 200)
        var failing: [[String: Any]] = []
        for device in onSummer {
            failing.append(Fleet.event(before[device]!, device: device, outcome: "downloaded"))
            failing.append(Fleet.event(before[device]!, device: device, outcome: "failed", reason: "out of memory"))
        }
        let reply = try await fleet.report(failing)
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.object["accepted"] as? Int == failing.count)

        let halted = try await fleet.waitForStatus(summer) { $0["state"] as? String == "halted" }
        #expect(halted["state"] as? String == "halted", "\(halted)")
        let reason = (halted["rollout"] as? [String: Any])?["haltReason"] as? String ?? ""
        #expect(reason == "\(onSummer.count) of \(onSummer.count) devices failed to load FlowerClassifier: 100 % ≥ 10 %", "\(reason)")
        #expect(halted["devices"] as? Int == onSummer.count)
        #expect((halted["outcomes"] as? [String: Int])?["failed"] == onSummer.count)
        #expect(((halted["topReasons"] as? [[String: Any]])?.first)?["reason"] as? String == "out of memory")

        // Every device is back on spring, with a newer sequence number than the stage's.
        let after = try await fleet.manifests()
        #expect(after.values.allSatisfy { $0.deploymentID == spring && $0.sequence == springSequence + 2 }, "\(after.values.map(\.deploymentID))")
        let audit = try await fleet.flowers.admin.call("GET", "/v1/teams/T/audit")
        let halts = audit.array.filter { $0["action"] as? String == "deployment.halt" }
        #expect(halts.count == 1 && (halts.first?["reason"] as? String) == reason, "\(halts)")
        let metrics = try await HTTP(base: server.base).call("GET", "/metrics")
        #expect(metrics.text.contains("coffer_rollout_halts_total{by=\"gate\"} 1") || String(decoding: metrics.body, as: UTF8.self).contains("coffer_rollout_halts_total{by=\"gate\"} 1"))

        // A healthy deployment: its stage runs 1.8 s, then the timer moves it to every device.
        let autumn = try await fleet.deployment("autumn")
        #expect(try await fleet.stage(autumn, ["stages": [50, 100], "stageHours": 0.0005, "haltAt": 10, "minReports": 5]).status == 200)
        let middle = try await fleet.manifests()
        let onAutumn = middle.filter { $0.value.deploymentID == autumn }
        #expect((10...30).contains(onAutumn.count), "\(onAutumn.count)")
        let loaded = onAutumn.flatMap { device, manifest in
            ["FlowerClassifier", "FlowerStylizer"].map { Fleet.event(manifest, device: device, model: $0, outcome: "loaded") }
        }
        #expect(try await fleet.report(loaded).status == 200)
        let completed = try await fleet.waitForStatus(autumn) { ($0["rollout"] as? [String: Any])?["state"] as? String == "completed" }
        #expect((completed["rollout"] as? [String: Any])?["stagePercent"] as? Int == 100, "\(completed)")
        #expect(try await fleet.manifests().values.allSatisfy { $0.deploymentID == autumn })

        let history = try await fleet.flowers.admin.call("GET", Flowers.base + "/activations")
        #expect(history.array.compactMap { $0["kind"] as? String } == ["stage 100 %", "stage 50 %", "halt", "stage 50 %", "activate"])
    }

    @Test("two instances on one PostgreSQL: the automatic halt and the timed stage happen exactly once",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func twoInstances() async throws {
        let first = try await TestServer.start(postgres: true, adjust: Self.fast)
        let database = first.configuration.databaseURL
        let second = try await TestServer.start(postgres: true, dataDirectory: first.dataDirectory, databaseURL: database, adjust: Self.fast)
        defer {
            Task {
                try? await second.stop(removingData: false)
                try? await first.stop()
            }
        }
        try await first.app.asyncBoot()
        try await second.app.asyncBoot()
        let fleet = Fleet(try await Flowers.make(first))
        let spring = try await fleet.deployment("spring")
        #expect(try await fleet.flowers.activate(spring).status == 200)
        let summer = try await fleet.deployment("summer")
        #expect(try await fleet.stage(summer, ["stages": [50, 100], "stageHours": 1000, "haltAt": 10, "minReports": 5]).status == 200)
        let seen = try await fleet.manifests(base: second.base)
        #expect(try await fleet.manifests(base: first.base).mapValues(\.deploymentID) == seen.mapValues(\.deploymentID))
        // Half the failing devices report to each instance.
        let onSummer = seen.filter { $0.value.deploymentID == summer }.map(\.key).sorted()
        for (index, device) in onSummer.enumerated() {
            let base = index.isMultiple(of: 2) ? first.base : second.base
            #expect(try await fleet.report([Fleet.event(seen[device]!, device: device, outcome: "failed", reason: "crash")], base: base).status == 200)
        }
        let halted = try await fleet.waitForStatus(summer) { $0["state"] as? String == "halted" }
        #expect(halted["state"] as? String == "halted")
        // The instance that did not halt it sees the halt within its cache's freshness (a second).
        #expect(try await fleet.manifests(base: second.base, within: 5) { $0.deploymentID == spring }.values.allSatisfy { $0.deploymentID == spring })
        #expect(try await fleet.manifests(base: first.base, within: 5) { $0.deploymentID == spring }.values.allSatisfy { $0.deploymentID == spring })

        let autumn = try await fleet.deployment("autumn")
        #expect(try await fleet.stage(autumn, ["stages": [50, 100], "stageHours": 0.0005, "haltAt": 10, "minReports": 5]).status == 200)
        let middle = try await fleet.manifests(base: second.base, within: 5) { $0.deploymentID != spring || $0.sequence >= 4 }
        let loaded = middle.filter { $0.value.deploymentID == autumn }.map { Fleet.event($0.value, device: $0.key, outcome: "loaded") }
        #expect(try await fleet.report(loaded, base: second.base).status == 200)
        _ = try await fleet.waitForStatus(autumn) { ($0["rollout"] as? [String: Any])?["state"] as? String == "completed" }
        // Both instances kept checking for a while after each change: still one of each.
        try await Task.sleep(for: .seconds(1))
        let kinds = try await fleet.flowers.admin.call("GET", Flowers.base + "/activations").array.compactMap { $0["kind"] as? String }
        #expect(kinds == ["stage 100 %", "stage 50 %", "halt", "stage 50 %", "activate"], "\(kinds)")
        let audit = try await fleet.flowers.admin.call("GET", "/v1/teams/T/audit").array.compactMap { $0["action"] as? String }
        #expect(audit.filter { $0 == "deployment.halt" }.count == 1 && audit.filter { $0 == "deployment.advance" }.count == 1, "\(audit)")
        #expect(try await fleet.manifests(base: first.base, within: 5) { $0.deploymentID == autumn }.values.allSatisfy { $0.deploymentID == autumn })
    }

    @Test("by hand: advance moves one stage, halt sends every device back, and neither works without a staged rollout")
    func byHand() async throws {
        let server = try await TestServer.start(adjust: Self.fast)
        defer { Task { try? await server.stop() } }
        try await server.app.asyncBoot()
        let fleet = Fleet(try await Flowers.make(server))
        let spring = try await fleet.deployment("spring")
        let summer = try await fleet.deployment("summer")
        // No deployment to stage from.
        let first = try await fleet.stage(spring, ["stages": [10, 100]])
        #expect(first.status == 409 && first.text.contains("activate the first one without stages"), "\(first.text)")
        #expect(try await fleet.flowers.activate(spring).status == 200)
        for bad: [String: Any] in [["stages": [10, 50]], ["stages": [50, 10, 100]], ["stages": [0, 100]], ["stages": [10, 100], "haltAt": 0],
                                   ["stages": [10, 100], "stageHours": -1], ["stages": [10, 100], "minReports": 0], ["haltAt": 5], ["stages": []]] {
            let reply = try await fleet.stage(summer, bad)
            #expect(reply.status == 400, "\(bad): \(reply.text)")
        }
        #expect(try await fleet.stage(summer, ["stages": [10, 50, 100]]).status == 200)
        let winter = try await fleet.deployment("winter")
        let second = try await fleet.stage(winter, ["stages": [10, 100]])
        #expect(second.status == 409 && second.text.contains("is running"), "\(second.text)")

        let advanced = try await fleet.flowers.admin.call("POST", Flowers.base + "/deployments/\(summer)/advance")
        #expect(advanced.status == 200, "\(advanced.text)")
        #expect((advanced.object["rollout"] as? [String: Any])?["stagePercent"] as? Int == 50)
        let onSummer = try await fleet.manifests().values.filter { $0.deploymentID == summer }.count
        #expect((10...30).contains(onSummer), "\(onSummer)")

        let halted = try await fleet.flowers.admin.call("POST", Flowers.base + "/deployments/\(summer)/halt", json: ["reason": "wrong labels"])
        #expect(halted.status == 200, "\(halted.text)")
        #expect((halted.object["rollout"] as? [String: Any])?["haltReason"] as? String == "by admin: wrong labels")
        #expect(try await fleet.manifests().values.allSatisfy { $0.deploymentID == spring })
        #expect(try await fleet.flowers.admin.call("POST", Flowers.base + "/deployments/\(summer)/halt").status == 409)
        #expect(try await fleet.flowers.admin.call("POST", Flowers.base + "/deployments/\(summer)/advance").status == 409)

        // A plain activation ends a running rollout (superseded) and reaches every device.
        #expect(try await fleet.stage(winter, ["stages": [10, 100]]).status == 200)
        #expect(try await fleet.flowers.activate(summer).status == 200)
        let status = try await fleet.status(winter)
        #expect((status["rollout"] as? [String: Any])?["state"] as? String == "superseded")
        #expect(try await fleet.manifests().values.allSatisfy { $0.deploymentID == summer })
    }
}
