import ArgumentParser
import CofferFormat
import Foundation
import ModelInspection

/// `--model NAME=PATH`, `--rule 'CONDITION : NAME=PATH, …'`, `--rollout PERCENT` and `--activate`:
/// what `deployment create` and `deployment clone` put in a deployment.
struct DeploymentContent: ParsableArguments {
    @Option(name: .customLong("model"), help: ArgumentHelp(
        "A default model: a model name of the collection and its sealed file; repeat for each model.",
        valueName: "NAME=PATH.coffer"))
    var models: [String] = []

    @Option(name: .customLong("rule"), help: ArgumentHelp(
        """
        A targeting rule: 'CONDITION : NAME=PATH[, NAME=PATH…]'. A device the condition matches gets \
        these models instead of the defaults (the first matching rule applies, in the order given). The \
        condition ends at the first ':', so it cannot contain one; paths in a rule cannot contain ','. \
        Conditions are clauses 'name op value' joined by ';', such as 'deviceClass=tablet' or \
        'osName=iOS; osVersion>=17.4' (docs/TARGETING.md).
        """,
        valueName: "RULE"))
    var rules: [String] = []

    @Option(help: ArgumentHelp(
        """
        Adds '; rollout=PERCENT' to the condition of every --rule whose condition has no rollout \
        clause, so each such rule reaches only that share of the devices it matches (the others get \
        the next matching rule, or the defaults). Needs at least one --rule. PERCENT is 0 to 100, with \
        at most two decimals.
        """,
        valueName: "PERCENT"))
    var rollout: String?

    @Flag(help: "Activate the deployment as soon as it is saved: devices get it at once.")
    var activate = false

    @OptionGroup(title: "Recording what is inside the models (optional)") var key: KeyOptions

    func validate() throws { _ = try plan() }

    /// A model name and the file that holds its sealed model.
    struct Model {
        let name: String
        let file: String
    }

    /// A rule: its condition (with the rollout clause added) and the models it gives.
    struct Rule {
        let condition: String
        let models: [Model]
    }

    /// The options, parsed: what to upload and how to name it.
    struct Plan {
        let models: [Model]
        /// Nil when no --rule was given (a clone then keeps its source's rules).
        let rules: [Rule]?

        /// The defaults, then each rule's models.
        private var everyModel: [Model] { models + (rules ?? []).flatMap(\.models) }

        /// Each file once, in the order first named.
        var files: [String] {
            var seen = Set<String>()
            return everyModel.map(\.file).filter { seen.insert($0).inserted }
        }

        /// Every model name the options use.
        var names: [String] { everyModel.map(\.name) }
    }

    /// Parses the options; a usage error says which one is wrong and how.
    func plan() throws -> Plan {
        if let rollout {
            guard Self.isPercentage(rollout) else { throw ValidationError("--rollout is a percentage from 0 to 100, such as 10 or 2.5") }
            guard !rules.isEmpty else { throw ValidationError("--rollout applies to the conditions of --rule options; give at least one --rule") }
        }
        let defaults = try Self.models(models, what: "--model")
        var parsed: [Rule] = []
        for (index, rule) in rules.enumerated() {
            guard let colon = rule.firstIndex(of: ":") else {
                throw ValidationError("--rule \(index + 1) is not 'CONDITION : NAME=PATH[, NAME=PATH…]' (no ':')")
            }
            var condition = rule[..<colon].trimmingCharacters(in: .whitespaces)
            guard !condition.isEmpty else { throw ValidationError("--rule \(index + 1) has no condition before ':'") }
            let models = try Self.models(rule[rule.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false).map(String.init),
                                         what: "--rule \(index + 1)")
            if let rollout, !Self.hasRollout(condition) { condition += "; rollout=" + rollout }
            parsed.append(Rule(condition: condition, models: models))
        }
        return Plan(models: defaults, rules: rules.isEmpty ? nil : parsed)
    }

    /// `NAME=PATH` items: names unique, neither part empty.
    private static func models(_ items: [String], what: String) throws -> [Model] {
        var models: [Model] = []
        for item in items {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            let file = parts.count == 2 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            guard !name.isEmpty, !file.isEmpty else { throw ValidationError("\(what): '\(item.trimmingCharacters(in: .whitespaces))' is not NAME=PATH") }
            guard !models.contains(where: { $0.name == name }) else { throw ValidationError("\(what) gives \(name) twice") }
            models.append(Model(name: name, file: file))
        }
        return models
    }

    /// Whether a condition has a `rollout` clause (a clause is `name op value`; clauses are joined by `;`).
    static func hasRollout(_ condition: String) -> Bool {
        condition.split(separator: ";").contains { clause in
            let name = clause.trimmingCharacters(in: .whitespaces).prefix { $0.isLetter || $0.isNumber || "._-".contains($0) }
            return name == "rollout"
        }
    }

    /// `0` to `100`, with at most two decimals.
    static func isPercentage(_ text: String) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, (1...3).contains(whole.count), whole.allSatisfy(\.isASCII), whole.allSatisfy(\.isNumber) else { return false }
        if parts.count == 2 {
            guard (1...2).contains(parts[1].count), parts[1].allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        }
        return (Double(text) ?? 101) <= 100
    }
}

extension DeploymentContent.Plan {
    /// Uploads each file once (skipping those the server has) and returns the deployment's models
    /// and rules by blob address. Says what it did with each file if `report`.
    ///
    /// With `key` (a model key or passphrase), every file sealed with it is inspected before anything is sent
    /// — a wrong passphrase or a damaged model stops the command — and its facts are recorded after its upload.
    /// Files sealed with another model key are uploaded without facts.
    func upload(for team: String, _ client: APIClient, report: Bool, key: KeyMaterial? = nil)
        async throws -> (models: [String: String], rules: [API.DeploymentInput.RuleInput]?) {
        var facts: [String: ModelReport] = [:]
        if let key {
            for file in files {
                let header = try SealedModel.readHeader(path: file, maximumHeaderLength: SealedModel.maximumHeaderLength)
                if case .modelKey(let modelKey) = key, header.keyID != modelKey.id {
                    if report { Printable.say("Not recording what is inside \(file): it is sealed with another key") }
                    continue
                }
                facts[file] = try SealedInspection.report(file, header: header, using: key)
            }
        }
        let uploader = BlobUpload(client: client, team: team)
        var addresses: [String: String] = [:]
        for file in files {
            let outcome = try await uploader.run(file)
            addresses[file] = outcome.address
            if let report = facts[file] {
                try await ModelFactsUpload(client: client, team: team).run(report, address: outcome.address)
            }
            guard report else { continue }
            if outcome.sent {
                Printable.say("Uploaded \(file) (\(outcome.size) bytes): \(outcome.address)")
            } else {
                Printable.say("Skipped \(file): the server already has it (\(outcome.address))")
            }
        }
        func byAddress(_ models: [DeploymentContent.Model]) -> [String: String] {
            Dictionary(uniqueKeysWithValues: models.map { ($0.name, addresses[$0.file] ?? "") })
        }
        return (byAddress(models), rules.map { $0.map { API.DeploymentInput.RuleInput(condition: $0.condition, models: byAddress($0.models)) } })
    }
}
