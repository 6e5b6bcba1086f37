import Vapor

/// A deployment as a client sends it: model name → blob address (SHA-256) for the defaults, and
/// rules with conditions in the targeting syntax (docs/TARGETING.md). Used to create, clone and
/// edit; in a clone or an edit, `models` replaces the named defaults and `rules`, when present,
/// replaces all rules.
struct DeploymentInput: Content {
    var name: String?
    var models: [String: String]?
    var rules: [RuleInput]?

    struct RuleInput: Content {
        var condition: String
        var models: [String: String]
    }

    static let maximumRules = 50

    /// The rules' conditions, parsed; a bad one is refused with its reason and position.
    func parsedRules() throws -> [(condition: TargetingCondition, models: [String: String])]? {
        guard let rules else { return nil }
        guard rules.count <= Self.maximumRules else { throw APIError.invalid("a deployment has at most \(Self.maximumRules) rules") }
        return try rules.enumerated().map { index, rule in
            do {
                return (try TargetingCondition(parsing: rule.condition), rule.models)
            } catch let error as TargetingError {
                throw APIError(.unprocessableEntity, "invalid_rule", "rule \(index + 1): \(error.reason)")
            }
        }
    }
}
