/// The attribute a clause is about, named before its operator.
enum TargetingAttribute: Sendable, Equatable {
    /// The attributes with fixed names; see docs/TARGETING.md for what each compares.
    case deviceClass, osName, osVersion, appVersion, language, region, arch, memory, rollout
    /// `custom.NAME`: an attribute the app defines, compared as an exact string.
    case custom(String)

    /// The attributes with fixed names.
    static let builtIn: [TargetingAttribute] = [
        .deviceClass, .osName, .osVersion, .appVersion, .language, .region, .arch, .memory, .rollout,
    ]

    /// Names people are likely to write for an attribute, offered as "did you mean".
    private static let aliases: [String: TargetingAttribute] = [
        "memorygib": .memory, "country": .region, "locale": .language, "platform": .osName, "os": .osName,
        "class": .deviceClass, "architecture": .arch, "percent": .rollout, "percentage": .rollout,
    ]

    /// The prefix of custom attribute names.
    static let customPrefix = "custom."

    /// The name as written in a condition, e.g. `osVersion` or `custom.tier`.
    var name: String {
        switch self {
        case .deviceClass: "deviceClass"
        case .osName: "osName"
        case .osVersion: "osVersion"
        case .appVersion: "appVersion"
        case .language: "language"
        case .region: "region"
        case .arch: "arch"
        case .memory: "memory"
        case .rollout: "rollout"
        case .custom(let name): Self.customPrefix + name
        }
    }

    /// The operators a clause about this attribute may use.
    var operators: [ComparisonOperator] {
        switch self {
        case .osVersion, .appVersion, .memory: ComparisonOperator.allCases
        case .rollout: [.equal]
        default: [.equal, .notEqual]
        }
    }

    /// The attribute called `name` (case-sensitive) in `clause`; an unknown name is an error that
    /// suggests the likely one.
    init(name: Substring, clause: Substring) throws(TargetingError) {
        if name.hasPrefix(Self.customPrefix) {
            let custom = name.dropFirst(Self.customPrefix.count)
            guard TargetingText.isCustomName(custom) else {
                throw .inClause("custom attribute name \(TargetingText.quoted(custom)) must be 1 to 64 of A-Z a-z 0-9 _ . -", clause)
            }
            self = .custom(String(custom))
            return
        }
        if let known = Self.builtIn.first(where: { $0.name == name }) {
            self = known
            return
        }
        var problem = "unknown attribute \(TargetingText.quoted(name))"
        if let likely = Self.likely(name) { problem += " (did you mean '\(likely)'?)" }
        throw .inClause(problem, clause)
    }

    /// The name someone probably meant by `name`: a built-in one spelt in another case, an alias,
    /// or `custom.` in another case.
    private static func likely(_ name: Substring) -> String? {
        let folded = name.lowercased()
        if let known = builtIn.first(where: { $0.name.lowercased() == folded }) ?? aliases[folded] { return known.name }
        if folded.hasPrefix(customPrefix) { return customPrefix + name.dropFirst(customPrefix.count) }
        return nil
    }
}
