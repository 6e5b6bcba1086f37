import CofferServer
import Foundation
import Testing

/// The ways out of a staged rollout that are not its own stages: a plain activation of the staged
/// deployment, and a rollback after a halt.
@Suite("Leaving a staged rollout")
struct RolloutExitTests {
    @Test("activating the staged deployment without stages gives it to every device; rollback after a halt skips the halted deployment")
    func plainActivationAndRollback() async throws {
        let server = try await TestServer.start(adjust: RolloutTests.fast)
        defer { Task { try? await server.stop() } }
        try await server.app.asyncBoot()
        let fleet = Fleet(try await Flowers.make(server))
        let spring = try await fleet.deployment("spring")
        #expect(try await fleet.flowers.activate(spring).status == 200)
        let springSequence = try #require(try await fleet.manifests().values.first?.sequence)

        // Summer at 10 %, then activated plainly: before, the server answered 200 and changed
        // nothing (summer was already "the active deployment"), and ~90 % of devices stayed on spring.
        let summer = try await fleet.deployment("summer")
        #expect(try await fleet.stage(summer, ["stages": [10, 100], "stageHours": 1000]).status == 200)
        let activated = try await fleet.flowers.activate(summer)
        #expect(activated.status == 200, "\(activated.text)")
        let everyone = try await fleet.manifests()
        #expect(everyone.values.allSatisfy { $0.deploymentID == summer && $0.sequence == springSequence + 2 },
                "\(everyone.values.map { ($0.deploymentID, $0.sequence) })")
        #expect((try await fleet.status(summer)["rollout"] as? [String: Any])?["state"] as? String == "superseded")
        // Activated again with nothing staged: nothing changes, no new sequence number.
        #expect(try await fleet.flowers.activate(summer).status == 200)
        #expect(try await fleet.manifests().values.allSatisfy { $0.sequence == springSequence + 2 })

        // Autumn staged from summer and halted: every device is back on summer. A rollback now goes
        // to the deployment every device had before summer (spring), not to the halted autumn.
        let autumn = try await fleet.deployment("autumn")
        #expect(try await fleet.stage(autumn, ["stages": [50, 100], "stageHours": 1000]).status == 200)
        #expect(try await fleet.flowers.admin.call("POST", Flowers.base + "/deployments/\(autumn)/halt").status == 200)
        #expect(try await fleet.manifests().values.allSatisfy { $0.deploymentID == summer })
        let rolledBack = try await fleet.flowers.admin.call("POST", Flowers.base + "/rollback")
        #expect(rolledBack.status == 200, "\(rolledBack.text)")
        #expect((rolledBack.object["id"] as? String)?.lowercased() == spring, "\(rolledBack.text)")
        #expect(try await fleet.manifests().values.allSatisfy { $0.deploymentID == spring })

        // With only a halted rollout's deployment before the current one, there is nothing to roll back to.
        let fresh = try await TestServer.start(adjust: RolloutTests.fast)
        defer { Task { try? await fresh.stop() } }
        try await fresh.app.asyncBoot()
        let other = Fleet(try await Flowers.make(fresh))
        let first = try await other.deployment("first")
        #expect(try await other.flowers.activate(first).status == 200)
        let second = try await other.deployment("second")
        #expect(try await other.stage(second, ["stages": [50, 100], "stageHours": 1000]).status == 200)
        #expect(try await other.flowers.admin.call("POST", Flowers.base + "/deployments/\(second)/halt").status == 200)
        let nothing = try await other.flowers.admin.call("POST", Flowers.base + "/rollback")
        #expect(nothing.status == 409, "\(nothing.text)")
        #expect(try await other.manifests().values.allSatisfy { $0.deploymentID == first })
    }
}
