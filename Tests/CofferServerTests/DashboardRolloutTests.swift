import CofferFormat
@testable import CofferServer
import Foundation
import Testing

/// Staged rollouts in the browser: the staged activation form, the rollout card with its device
/// reports and failure reasons (escaped), advance and halt by hand, the adoption chart; a viewer
/// sees the card and gets no forms.
@Suite("Dashboard rollouts")
struct DashboardRolloutTests {
    @Test("stage a deployment from its page, see failing devices halt it with their reasons, the adoption chart, and advance or halt by hand")
    func stagedInTheBrowser() async throws {
        let server = try await TestServer.start(adjust: RolloutTests.fast)
        defer { Task { try? await server.stop() } }
        try await server.app.asyncBoot()
        let fleet = Fleet(try await Flowers.make(server))
        let browser = try await DashboardTests.ownerBrowser(server)
        let spring = try await fleet.deployment("spring")
        let summer = try await fleet.deployment("summer")
        let collection = DashboardDeploymentTests.collection
        let springPage = try await browser.get(collection + "/deployments/" + spring)
        #expect(springPage.status == 200 && !springPage.html.contains("Activate in stages"), "nothing to stage from yet")
        #expect(try await browser.post(collection + "/deployments/\(spring)/activate", [:]).status == 303)

        let page = try await browser.get(collection + "/deployments/" + summer)
        #expect(page.html.contains("Activate in stages") && page.html.contains("name=\"stages\" value=\"1,10,50,100\""))
        let bad = try await browser.post(collection + "/deployments/\(summer)/activate", ["stages": "50,ten,100"])
        #expect(bad.status == 400 && bad.html.contains("percentages separated by commas"), "\(bad.status)")
        let staged = try await browser.post(collection + "/deployments/\(summer)/activate",
                                            ["stages": "50, 100", "stageHours": "1000", "haltAt": "10", "minReports": "5"])
        #expect(staged.status == 303 && staged.location == collection + "/deployments/" + summer, "\(staged.status) \(staged.location ?? "")")
        let running = try await browser.get(collection + "/deployments/" + summer)
        #expect(running.html.contains("staged: stage 1 of 2 (50 %)") && running.html.contains("[50 %] → 100 %"))
        #expect(running.html.contains("the others keep the previous one") && !running.html.contains("Devices get this deployment now"))
        #expect(running.html.contains("Advance to the next stage now") && running.html.contains("action=\"\(collection)/deployments/\(summer)/halt\""))

        // Devices on the stage fail with a reason that carries markup: it is text on the page.
        let manifests = try await fleet.manifests()
        let failing = manifests.filter { $0.value.deploymentID == summer }.map {
            Fleet.event($0.value, device: $0.key, outcome: "failed", reason: "<b>out of memory</b>")
        }
        #expect(try await fleet.report(failing).status == 200)
        _ = try await fleet.waitForStatus(summer) { $0["state"] as? String == "halted" }
        let halted = try await browser.get(collection + "/deployments/" + summer)
        #expect(halted.html.contains("halted: \(failing.count) of \(failing.count) devices failed to load FlowerClassifier: 100 % ≥ 10 %"), "\(halted.html)")
        #expect(halted.html.contains("&lt;b&gt;out of memory&lt;/b&gt;") && !halted.html.contains("<b>out of memory"))
        #expect(halted.html.contains("class=\"failing\"") && !halted.html.contains("Advance to the next stage now"))

        // The collection page draws adoption: the failing devices first reported summer this hour.
        let overview = try await browser.get(collection)
        #expect(overview.html.contains("Adoption: devices reporting a deployment for the first time"))
        #expect(overview.html.contains("\(failing.count) devices from"), "the chart's summary counts the reporting devices")
        #expect(overview.html.contains("<th scope=\"col\">Hour (UTC)</th>") && overview.html.contains("<th scope=\"col\">summer</th>"))

        // By hand: a second staged rollout advanced, then halted with a reason.
        let autumn = try await fleet.deployment("autumn")
        #expect(try await browser.post(collection + "/deployments/\(autumn)/activate", ["stages": "10,50,100"]).status == 303)
        #expect(try await browser.post(collection + "/deployments/\(autumn)/advance", [:]).status == 303)
        #expect(try await fleet.status(autumn)["rollout"].flatMap { ($0 as? [String: Any])?["stagePercent"] as? Int } == 50)
        #expect(try await browser.post(collection + "/deployments/\(autumn)/halt", ["reason": "labels look wrong"]).status == 303)
        let stopped = try await browser.get(collection + "/deployments/" + autumn)
        #expect(stopped.html.contains("halted: by admin: labels look wrong"), "\(stopped.html)")
        #expect(try await fleet.manifests().values.allSatisfy { $0.deploymentID == spring })

        // A viewer sees the card and no forms; a forged form is refused.
        let token = try #require(try await fleet.flowers.world.member("vera", role: "viewer", in: "T").token)
        let viewer = Browser(base: server.base)
        #expect(try await viewer.welcome(token: token, email: "vera@example.com", password: DashboardTests.password).status == 303)
        let seen = try await viewer.get(collection + "/deployments/" + summer)
        #expect(seen.status == 200 && seen.html.contains("devices reported") && !seen.html.contains("name=\"stages\""))
        let winter = try await fleet.deployment("winter")
        #expect(try await viewer.post(collection + "/deployments/\(winter)/activate", ["stages": "10,100"]).status == 403)
    }
}
