import ModelInspection

/// Deployments and their models as people read them.
enum DeploymentText {
    /// A deployment: what it is, its default models, its rules, and whether it can be activated.
    static func describe(_ deployment: API.Deployment) -> String {
        var lines = [
            "Deployment \(deployment.name) of \(deployment.collection): \(deployment.status)",
            "ID:        \(deployment.id.lowercased())",
            "Created:   \(deployment.createdAt ?? "-") by \(deployment.createdBy)",
            "Activated: \(deployment.activatedAt ?? "-")",
            "",
            "Default models:",
            indented(models(deployment.models)),
        ]
        if let rollout = deployment.rollout { lines.insert("Rollout:   " + rolloutLine(rollout), at: 4) }
        for (index, rule) in deployment.rules.enumerated() {
            lines += ["", "Rule \(index + 1) when \(rule.condition):", indented(models(rule.models))]
        }
        if !deployment.problems.isEmpty {
            lines += ["", "Cannot be activated:"] + deployment.problems.map { "  - " + $0 }
        } else if deployment.status != "active" {
            lines += ["", "Ready to activate."]
        }
        return lines.joined(separator: "\n")
    }

    /// A rollout in one line: "staged: stage 2 of 4 (10 %), next after 2026-11-25T08:00:00Z if …",
    /// "halted: 7 of 58 devices failed to load FlowerClassifier: 12.1 % ≥ 5 %", "completed".
    static func rolloutLine(_ rollout: API.Rollout) -> String {
        switch rollout.state {
        case "staged":
            return "staged: stage \(rollout.stageIndex + 1) of \(rollout.stages.count) (\(rollout.stagePercent) %), "
                + "next after \(rollout.nextStageAt ?? "-") if fewer than \(percent(rollout.haltAt)) % of at least \(rollout.minReports) devices fail"
        case "halted":
            return "halted: " + Printable.text(rollout.haltReason ?? "")
        default:
            return rollout.state
        }
    }

    /// A percentage with at most one decimal.
    static func percent(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return tenths.rounded() == tenths ? String(Int(tenths)) : String(format: "%.1f", tenths)
    }

    /// A table of model versions, by name.
    static func models(_ models: [String: API.Version]) -> String {
        var table = TextTable("NAME", "VERSION", "SHA256", "SIZE", "KEY ID")
        for (name, version) in models.sorted(by: { $0.key < $1.key }) {
            table.add(name, version.versionID.lowercased(), shortAddress(version.sha256), String(version.size), version.keyID)
        }
        // What the team recorded is inside each version, where it did (`coffer blob upload --key`).
        let facts = models.sorted(by: { $0.key < $1.key }).compactMap { name, version in
            version.facts.map { "  \(Printable.text(name)): \($0.summary)" }
        }
        return facts.isEmpty ? table.render() : table.render() + "\n" + facts.joined(separator: "\n")
    }

    /// The first 12 hex digits of a blob address, enough to tell models apart.
    static func shortAddress(_ sha256: String) -> String { String(sha256.prefix(12)) }

    private static func indented(_ text: String) -> String {
        text.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
    }
}
