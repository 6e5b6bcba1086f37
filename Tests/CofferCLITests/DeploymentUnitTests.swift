import Coffer
import Testing
@testable import coffer

@Suite("deployment options: --model, --rule, --rollout")
struct DeploymentUnitTests {
    static func plan(_ arguments: String...) throws -> DeploymentContent.Plan {
        try DeploymentContent.parse(arguments).plan()
    }

    @Test("a rule is split at its first ':' into a condition and NAME=PATH models")
    func rules() throws {
        let plan = try Self.plan("--model", "A=a.coffer", "--model", " B = b.coffer ",
                                 "--rule", "deviceClass=tablet; osVersion>=17 : A=big.coffer, B=b.coffer",
                                 "--rule", "region=US,CA; language=en:A=a.coffer")
        #expect(plan.models.map(\.name) == ["A", "B"])
        #expect(plan.models.map(\.file) == ["a.coffer", "b.coffer"])
        let rules = try #require(plan.rules)
        #expect(rules.map(\.condition) == ["deviceClass=tablet; osVersion>=17", "region=US,CA; language=en"])
        #expect(rules[0].models.map(\.name) == ["A", "B"])
        #expect(rules[0].models.map(\.file) == ["big.coffer", "b.coffer"])
        #expect(plan.files == ["a.coffer", "b.coffer", "big.coffer"])
        #expect(try Self.plan("--model", "A=a").rules == nil)
    }

    @Test("--rollout is added to each rule without a rollout clause, and only there")
    func rollout() throws {
        let plan = try Self.plan("--rule", "deviceClass=tablet : A=a", "--rule", "custom.tier=pro; rollout=5 : A=a",
                                 "--rule", "osName=iOS;rollout>=1 : A=a", "--rule", "custom.rollouts=yes : A=a", "--rollout", "12.5")
        #expect(plan.rules?.map(\.condition) == [
            "deviceClass=tablet; rollout=12.5", "custom.tier=pro; rollout=5", "osName=iOS;rollout>=1", "custom.rollouts=yes; rollout=12.5",
        ])
        for good in ["0", "10", "100", "2.5", "99.99"] { #expect(DeploymentContent.isPercentage(good), "\(good)") }
        for bad in ["", "-1", "100.01", "101", "1e1", "1.234", ".5", "5.", "١٠"] { #expect(!DeploymentContent.isPercentage(bad), "\(bad)") }
    }

    @Test("malformed options are usage errors")
    func malformed() {
        let cases: [[String]] = [
            ["--model", "A"], ["--model", "=a"], ["--model", "A="], ["--model", "A=a", "--model", "A=b"],
            ["--rule", "deviceClass=tablet"], ["--rule", ":A=a"], ["--rule", "deviceClass=tablet :"], ["--rule", "x=y : A=a, A=b"],
            ["--rule", "x=y : A=a,"], ["--rollout", "10"], ["--rule", "x=y : A=a", "--rollout", "fifty"],
        ]
        for arguments in cases {
            #expect(throws: (any Error).self, "\(arguments)") { try DeploymentContent.parse(arguments).plan() }
        }
    }

    @Test("device attributes: the known names and custom.NAME, each once")
    func attributes() throws {
        let parsed = try DeviceAttributes(options: ["deviceClass=tablet", "osVersion=17.4", "custom.tier=pro", "memoryGiB=8"])
        #expect(parsed.queryItems.map(\.name) == ["deviceClass", "osVersion", "memoryGiB", "custom.tier"])
        #expect(parsed.queryItems.map(\.value) == ["tablet", "17.4", "8", "pro"])
        for bad in [["colour=red"], ["custom.=x"], ["deviceClass"], ["deviceClass=a", "deviceClass=b"], ["deviceID=x"]] {
            #expect(throws: (any Error).self, "\(bad)") { try DeviceAttributes(options: bad) }
        }
    }
}
