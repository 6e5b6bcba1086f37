import Foundation

/// Targeting rules as the deployment form edits them: one rule a line, in the CLI's words,
/// `CONDITION : NAME=SHA256[, NAME=SHA256…]` (`coffer deployment create --rule`, docs/TARGETING.md),
/// where a model is named by the SHA-256 of an uploaded version, or its first 8 or more hex digits.
///
/// Only the line's shape is read here; each condition is checked by the server's own targeting
/// parser (`TargetingCondition`), and each model by ``ModelVersions`` when the deployment is saved.
/// Errors name the line and say what is wrong.
enum RulesText {
    static let maximumLength = 20_000

    /// The rules of `text`, blank lines and lines starting with `#` skipped. `resolve` turns a model
    /// name and what the line gives for it into a full SHA-256 (or throws a sentence).
    static func parse(_ text: String, resolve: (String, String) throws -> String) throws -> [DeploymentInput.RuleInput] {
        var rules: [DeploymentInput.RuleInput] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let at = "Line \(index + 1)"
            guard let colon = line.firstIndex(of: ":") else {
                throw DashboardError.invalidForm("\(at) is not “CONDITION : NAME=SHA256”: it has no “:”.")
            }
            let condition = line[..<colon].trimmingCharacters(in: .whitespaces)
            guard !condition.isEmpty else { throw DashboardError.invalidForm("\(at) has no condition before “:”.") }
            do {
                _ = try TargetingCondition(parsing: condition)
            } catch {
                throw DashboardError.invalidForm("\(at): \(DashboardErrorMiddleware.sentence(error.reason))")
            }
            var models: [String: String] = [:]
            for item in line[line.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false) {
                let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = parts[0].trimmingCharacters(in: .whitespaces)
                let value = parts.count == 2 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
                guard !name.isEmpty, !value.isEmpty else {
                    throw DashboardError.invalidForm("\(at): “\(item.trimmingCharacters(in: .whitespaces))” is not NAME=SHA256.")
                }
                guard models[name] == nil else { throw DashboardError.invalidForm("\(at) gives \(name) twice.") }
                do {
                    models[name] = try resolve(name, value)
                } catch DashboardError.invalidForm(let reason) {
                    throw DashboardError.invalidForm("\(at): \(reason)")
                }
            }
            rules.append(.init(condition: condition, models: models))
        }
        guard rules.count <= DeploymentInput.maximumRules else {
            throw DashboardError.invalidForm("A deployment has at most \(DeploymentInput.maximumRules) rules.")
        }
        return rules
    }

    /// A deployment's rules as the form shows them, models by their first 12 hex digits.
    static func text(_ rules: [DeploymentSpec.Rule], versions: [UUID: ModelVersionRecord]) -> String {
        rules.map { rule in
            rule.condition + " : " + rule.models.sorted { $0.key < $1.key }
                .map { "\($0.key)=\(versions[$0.value].map { String($0.blobID.prefix(12)) } ?? "?")" }.joined(separator: ", ")
        }.joined(separator: "\n")
    }

    /// Finds the version of `name` that `value` names among `versions`: a whole SHA-256, or a prefix
    /// of 8 or more hex digits that only one of them has.
    static func resolve(_ name: String, _ value: String, among versions: [ModelVersionRecord]) throws -> String {
        let value = value.lowercased()
        if BlobAddress.isValid(value) { return value }
        guard value.count >= 8, value.count < 64, value.allSatisfy(\.isHexDigit) else {
            throw DashboardError.invalidForm("\(name)=\(value) is not a SHA-256 (64 hex digits, or its first 8 or more).")
        }
        let matches = Set(versions.filter { $0.modelName == name && $0.blobID.hasPrefix(value) }.map(\.blobID))
        guard let only = matches.first else {
            throw DashboardError.invalidForm("no uploaded \(name) has a SHA-256 starting with \(value); upload it above or copy its SHA-256 from the lists.")
        }
        guard matches.count == 1 else { throw DashboardError.invalidForm("several uploads of \(name) start with \(value); give more digits.") }
        return only
    }
}
