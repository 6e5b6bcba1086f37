import CofferFormat
import CofferServer
import Foundation
import Testing

/// A deployment staged again is judged by its new rollout's devices: not by the failures that
/// halted an earlier rollout of it, nor by the healthy reports of its time as every device's
/// deployment. On SQLite and PostgreSQL.
@Suite("Staged again")
struct RolloutRestageTests {
    /// Half the devices, a stage too long to end by itself, halted from 10 % of 5 devices or more.
    static var plan: [String: Any] { ["stages": [50, 100], "stageHours": 1000, "haltAt": 10, "minReports": 5] }

    @Test("staged again after a halt: the old failures neither halt it nor show in its status; new failures halt it (SQLite)")
    func afterHaltSQLite() async throws { try await Self.afterHalt(.sqlite) }

    @Test("staged again after a halt: the old failures neither halt it nor show in its status; new failures halt it (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func afterHaltPostgres() async throws { try await Self.afterHalt(.postgres) }

    @Test("staged after being every device's deployment: its earlier reports do not advance the stage (SQLite)")
    func afterFullActivationSQLite() async throws { try await Self.afterFullActivation(.sqlite) }

    @Test("staged after being every device's deployment: its earlier reports do not advance the stage (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func afterFullActivationPostgres() async throws { try await Self.afterFullActivation(.postgres) }

    static func afterHalt(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres, adjust: RolloutTests.fast)
        defer { Task { try? await server.stop() } }
        try await server.app.asyncBoot()  // starts the periodic flush and gate checks
        let fleet = Fleet(try await Flowers.make(server))
        let spring = try await fleet.deployment("spring")
        #expect(try await fleet.flowers.activate(spring).status == 200)
        let summer = try await fleet.deployment("summer")

        // The first rollout: every device on summer fails to load it, and the gate halts it.
        #expect(try await fleet.stage(summer, plan).status == 200)
        let first = try await fleet.manifests()
        let onSummer = first.filter { $0.value.deploymentID == summer }.map(\.key).sorted()
        #expect((10...30).contains(onSummer.count), "a 50 % stage reaches about half of 40 devices, not \(onSummer.count)")
        let failures = onSummer.map { Fleet.event(first[$0]!, device: $0, outcome: "failed", reason: "out of memory") }
        #expect(try await fleet.report(failures).status == 200)
        let halted = try await fleet.waitForStatus(summer) { $0["state"] as? String == "halted" }
        #expect(halted["state"] as? String == "halted", "\(halted)")
        #expect((halted["outcomes"] as? [String: Int])?["failed"] == onSummer.count, "\(halted)")

        // What failed is fixed outside the deployment, and summer is staged again. Before, the
        // gate counted the first rollout's failures and halted it again at its first check.
        let again = try await fleet.stage(summer, plan)
        #expect(again.status == 200, "\(again.text)")
        try await Task.sleep(for: .milliseconds(1500))  // several gate checks
        let fresh = try await fleet.status(summer)
        #expect(fresh["state"] as? String == "staged", "\(fresh)")
        #expect(fresh["devices"] as? Int == 0, "\(fresh)")
        #expect((fresh["outcomes"] as? [String: Int])?["failed"] == 0, "\(fresh)")
        #expect((fresh["topReasons"] as? [[String: Any]])?.isEmpty == true, "\(fresh)")

        // The same devices get summer again (same seed), on the new manifest, and load it. One of
        // them sends only a failure it made on the first rollout's manifest, late: it is taken
        // (the device drops it) and not counted for this rollout. Another sends such a failure in
        // the same batch as its report on the new manifest (so they are written in one flush): its
        // load counts, the old failure does not.
        let second = try await fleet.manifests()
        #expect(second.filter { $0.value.deploymentID == summer }.map(\.key).sorted() == onSummer)
        let late = try #require(onSummer.last), mixed = try #require(onSummer.first)
        let healthy = Array(onSummer.dropLast())
        var events = healthy.map { Fleet.event(second[$0]!, device: $0, outcome: "loaded") }
        events.append(Fleet.event(first[late]!, device: late, outcome: "failed", reason: "late report"))
        events.append(Fleet.event(first[mixed]!, device: mixed, outcome: "failed", reason: "late report"))
        let taken = try await fleet.report(events)
        #expect(taken.status == 200 && taken.object["accepted"] as? Int == events.count, "\(taken.text)")
        let loaded = try await fleet.waitForStatus(summer) { $0["devices"] as? Int == healthy.count }
        #expect(loaded["state"] as? String == "staged", "\(loaded)")
        #expect(loaded["devices"] as? Int == healthy.count, "\(loaded)")
        #expect((loaded["outcomes"] as? [String: Int])?["loaded"] == healthy.count, "\(loaded)")
        #expect((loaded["outcomes"] as? [String: Int])?["failed"] == 0, "\(loaded)")
        #expect((loaded["topReasons"] as? [[String: Any]])?.isEmpty == true, "\(loaded)")

        // New failures past the threshold still halt it, counted among this rollout's devices only.
        let failing = Array(healthy.prefix(healthy.count / 2))
        let crashes = failing.map { Fleet.event(second[$0]!, device: $0, outcome: "failed", reason: "new crash") }
        #expect(try await fleet.report(crashes).status == 200)
        let haltedAgain = try await fleet.waitForStatus(summer) { $0["state"] as? String == "halted" }
        #expect(haltedAgain["state"] as? String == "halted", "\(haltedAgain)")
        let reason = (haltedAgain["rollout"] as? [String: Any])?["haltReason"] as? String ?? ""
        #expect(reason.hasPrefix("\(failing.count) of \(healthy.count) devices failed to load FlowerClassifier: "), "\(reason)")
        #expect((haltedAgain["outcomes"] as? [String: Int])?["failed"] == failing.count, "\(haltedAgain)")
        // Within one rollout outcomes add up: the failing devices' loads still count.
        #expect((haltedAgain["outcomes"] as? [String: Int])?["loaded"] == healthy.count, "\(haltedAgain)")
        #expect(((haltedAgain["topReasons"] as? [[String: Any]])?.compactMap { $0["reason"] as? String }) == ["new crash"], "\(haltedAgain)")
        #expect(try await fleet.manifests().values.allSatisfy { $0.deploymentID == spring })
        let history = try await fleet.flowers.admin.call("GET", Flowers.base + "/activations")
        #expect(history.array.compactMap { $0["kind"] as? String } == ["halt", "stage 50 %", "halt", "stage 50 %", "activate"])
    }

    static func afterFullActivation(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres, adjust: RolloutTests.fast)
        defer { Task { try? await server.stop() } }
        try await server.app.asyncBoot()
        let fleet = Fleet(try await Flowers.make(server))

        // Spring is every device's deployment, and all 40 load it.
        let spring = try await fleet.deployment("spring")
        #expect(try await fleet.flowers.activate(spring).status == 200)
        let everyone = try await fleet.manifests()
        let loaded = everyone.map { Fleet.event($0.value, device: $0.key, outcome: "loaded") }
        #expect(try await fleet.report(loaded).status == 200)
        let counted = try await fleet.waitForStatus(spring) { $0["devices"] as? Int == fleet.devices.count }
        #expect(counted["devices"] as? Int == fleet.devices.count, "\(counted)")

        // Summer for every device, then spring staged back from it, with stages of 1.8 s. Before,
        // spring's 40 earlier devices made its gate's reports: the stage advanced on its timer,
        // to 100 %, without one report about the rollout.
        let summer = try await fleet.deployment("summer")
        #expect(try await fleet.flowers.activate(summer).status == 200)
        var quick = plan
        quick["stageHours"] = 0.0005
        let staged = try await fleet.stage(spring, quick)
        #expect(staged.status == 200, "\(staged.text)")
        try await Task.sleep(for: .milliseconds(3000))  // past the stage's time, many gate checks
        let waiting = try await fleet.status(spring)
        #expect(waiting["state"] as? String == "staged", "\(waiting)")
        #expect((waiting["rollout"] as? [String: Any])?["stagePercent"] as? Int == 50, "\(waiting)")
        #expect(waiting["devices"] as? Int == 0, "\(waiting)")

        // Half the rollout's own devices fail: it halts, counted among them only (not among the 40
        // that reported while spring was every device's).
        let middle = try await fleet.manifests()
        let onSpring = middle.filter { $0.value.deploymentID == spring }.map(\.key).sorted()
        #expect((10...30).contains(onSpring.count), "\(onSpring.count)")
        let failing = Array(onSpring.prefix(onSpring.count / 2))
        var events = failing.map { Fleet.event(middle[$0]!, device: $0, outcome: "failed", reason: "crash") }
        events += onSpring.dropFirst(failing.count).map { Fleet.event(middle[$0]!, device: $0, outcome: "loaded") }
        #expect(try await fleet.report(events).status == 200)
        let halted = try await fleet.waitForStatus(spring) { $0["state"] as? String == "halted" }
        #expect(halted["state"] as? String == "halted", "\(halted)")
        let reason = (halted["rollout"] as? [String: Any])?["haltReason"] as? String ?? ""
        #expect(reason.hasPrefix("\(failing.count) of \(onSpring.count) devices failed to load FlowerClassifier: "), "\(reason)")
        #expect(try await fleet.manifests().values.allSatisfy { $0.deploymentID == summer })
    }
}
