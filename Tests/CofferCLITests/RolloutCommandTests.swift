import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `coffer deployment activate --stages`, `status`, `advance`, `halt` and `show` through the built
/// CLI against a real `coffer-server` whose gates run several times a second.
@Suite("coffer deployment: staged rollouts against a real server")
struct RolloutCommandTests {
    static let fast = ["COFFER_REPORT_FLUSH_SECONDS": "0.1", "COFFER_ROLLOUT_CHECK_SECONDS": "0.2"]

    @Test("stage a deployment, watch its status, see failing devices halt it, advance and halt another by hand")
    func stagedRollout() async throws {
        guard let flowers = try await DeploymentTests.Flowers(environment: Self.fast) else { return }
        defer { flowers.finish() }
        let session = flowers.session
        try await session.ok("deployment", "create", "--collection", "FlowerModels", "--name", "spring",
                       "--model", "FlowerClassifier=classifier.coffer", "--model", "FlowerStylizer=stylizer.coffer", "--activate")
        for name in ["summer", "autumn"] {
            try await session.ok("deployment", "create", "--collection", "FlowerModels", "--name", name,
                           "--model", "FlowerClassifier=classifier-large.coffer", "--model", "FlowerStylizer=stylizer.coffer")
        }

        // Options checked before anything is sent, and the server's rules in one line.
        let lone = try await session.coffer("deployment", "activate", "summer", "--collection", "FlowerModels", "--halt-at", "5")
        #expect(lone.status == 64 && lone.stderr.contains("--stage-hours, --halt-at and --min-reports go with --stages"), "\(lone.stderr)")
        let words = try await session.coffer("deployment", "activate", "summer", "--collection", "FlowerModels", "--stages", "1,ten,100")
        #expect(words.status == 64 && words.stderr.contains("--stages takes percentages"), "\(words.stderr)")
        let short = try await session.coffer("deployment", "activate", "summer", "--collection", "FlowerModels", "--stages", "10,50")
        #expect(short.status != 0 && short.stderr == "coffer: the last stage must be 100 (every device) (HTTP 400 invalid_request)\n", "\(short.stderr)")

        let staged = try await session.ok("deployment", "activate", "summer", "--collection", "FlowerModels", "--stages", "50,100",
                                    "--stage-hours", "1000", "--halt-at", "10", "--min-reports", "1")
        #expect(staged.hasPrefix("Staged deployment summer of FlowerModels from sequence 2: staged: stage 1 of 2 (50 %), next after 20"), "\(staged)")
        #expect(staged.hasSuffix(" if fewer than 10 % of at least 1 devices fail.\n"), "\(staged)")
        let status = try await session.ok("deployment", "status", "summer", "--collection", "FlowerModels")
        #expect(status.contains("Stages:    50 % → 100 %; each at least 1000 h; halt at 10 % of at least 1 devices"), "\(status)")
        #expect(status.contains("Devices:   0 reported (0 downloaded, 0 opened, 0 loaded, 0 failed)"), "\(status)")

        // One device on the stage fails to load the classifier: the server halts the rollout.
        var onSummer: (device: String, manifest: [String: Any])?
        for index in 0..<24 where onSummer == nil {
            let manifest = try await flowers.manifest("device-\(index)", deviceClass: "phone")
            if manifest["sequence"] as? Int == 2, (DeploymentTests.Flowers.models(manifest)["FlowerClassifier"]) == flowers.sha["classifier-large"] {
                onSummer = ("device-\(index)", manifest)
            }
        }
        let (device, manifest) = try #require(onSummer, "no device of 24 on a 50 % stage")
        let answer = try await Self.report(flowers, device: device, manifest: manifest, reason: "out of memory")
        #expect(answer == 200)
        var halted = [String: Any]()
        for _ in 0..<100 where halted["state"] as? String != "halted" {
            try await Task.sleep(for: .milliseconds(100))
            halted = await AdminSession.object(try session.ok("deployment", "status", "summer", "--collection", "FlowerModels", "--json"))
        }
        #expect(halted["state"] as? String == "halted", "\(halted)")
        let shown = try await session.ok("deployment", "show", "summer", "--collection", "FlowerModels")
        #expect(shown.contains("Rollout:   halted: 1 of 1 devices failed to load FlowerClassifier: 100 % ≥ 10 %"), "\(shown)")
        let text = try await session.ok("deployment", "status", "summer", "--collection", "FlowerModels")
        #expect(text.contains("FlowerClassifier  1        1       100 %") && text.contains("1 × out of memory"), "\(text)")
        let again = try await session.coffer("deployment", "advance", "summer", "--collection", "FlowerModels")
        #expect(again.status != 0 && again.stderr == "coffer: deployment summer has no staged rollout running (HTTP 409 conflict)\n", "\(again.stderr)")

        // By hand: autumn staged, advanced one stage, halted with a reason.
        try await session.ok("deployment", "activate", "autumn", "--collection", "FlowerModels", "--stages", "10,50,100")
        let advanced = try await session.ok("deployment", "advance", "autumn", "--collection", "FlowerModels")
        #expect(advanced.hasPrefix("Deployment autumn of FlowerModels: staged: stage 2 of 3 (50 %)"), "\(advanced)")
        let stopped = try await session.ok("deployment", "halt", "autumn", "--collection", "FlowerModels", "--reason", "labels look wrong")
        #expect(stopped == "Halted the rollout of autumn of FlowerModels: devices get the previous deployment from sequence 6.\n", "\(stopped)")
        let history = try await session.ok("deployment", "history", "--collection", "FlowerModels")
        let kinds = history.split(separator: "\n").dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().prefix(2).joined(separator: " ") }
        #expect(kinds == ["halt spring", "stage 50", "stage 10", "halt spring", "stage 50", "activate spring"], "\(history)")
    }

    /// Posts one failed report for `device`'s classifier, as the app; returns the HTTP status.
    static func report(_ flowers: DeploymentTests.Flowers, device: String, manifest: [String: Any], reason: String) async throws -> Int {
        let event: [String: Any] = [
            "id": UUID().uuidString, "deviceID": device, "collection": "FlowerModels", "sequence": manifest["sequence"] as? Int ?? 0,
            "deployment": manifest["deploymentID"] as? String ?? "", "model": "FlowerClassifier",
            "sha256": DeploymentTests.Flowers.models(manifest)["FlowerClassifier"] ?? "", "outcome": "failed", "reason": reason,
            "at": ISO8601DateFormatter().string(from: Date()),
        ]
        var request = URLRequest(url: URL(string: flowers.session.server.url + "/v1/device/reports")!)
        request.httpMethod = "POST"
        request.httpBody = try JSONSerialization.data(withJSONObject: ["events": [event]])
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Basic " + Data("\(flowers.appID):\(flowers.credential)".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }
}
