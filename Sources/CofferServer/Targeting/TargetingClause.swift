/// One clause of a condition, parsed: what it compares, how, and with which values. Every case
/// holds only what its attribute allows, so matching needs no further checks.
enum TargetingClause: Sendable, Equatable {
    /// `deviceClass`, `osName`, `region`, `arch` (ignoring case) or `custom.NAME` (exactly) with `=` or `!=`.
    case text(TextAttribute, ComparisonOperator, [String])
    /// `language` with `=` or `!=`.
    case language(ComparisonOperator, [LanguageRange])
    /// `osVersion` or `appVersion` with any operator.
    case version(VersionAttribute, ComparisonOperator, [Version])
    /// `memory` in GiB with any operator.
    case memory(ComparisonOperator, [FixedDecimal])
    /// `rollout=P`: the devices whose bucket is below P × 100.
    case rollout(basisPoints: Int)

    /// The attributes compared as text.
    enum TextAttribute: Sendable, Equatable {
        /// Compared ignoring case.
        case deviceClass, osName, region, arch
        case custom(String)

        /// The attribute as named in a condition.
        var attribute: TargetingAttribute {
            switch self {
            case .deviceClass: .deviceClass
            case .osName: .osName
            case .region: .region
            case .arch: .arch
            case .custom(let name): .custom(name)
            }
        }
    }

    /// The attributes compared as versions.
    enum VersionAttribute: Sendable, Equatable {
        /// The operating system's version or the app's.
        case osVersion, appVersion

        /// The attribute as named in a condition.
        var attribute: TargetingAttribute { self == .osVersion ? .osVersion : .appVersion }
    }

    /// The clause in normalised form: `NAME OP VALUES` with no spaces and values joined by `,`.
    var text: String {
        switch self {
        case .text(let attribute, let op, let values):
            attribute.attribute.name + op.rawValue + values.joined(separator: ",")
        case .language(let op, let ranges):
            "language" + op.rawValue + ranges.map(\.description).joined(separator: ",")
        case .version(let attribute, let op, let versions):
            attribute.attribute.name + op.rawValue + versions.map(\.description).joined(separator: ",")
        case .memory(let op, let amounts):
            "memory" + op.rawValue + amounts.map(\.description).joined(separator: ",")
        case .rollout(let basisPoints):
            "rollout=" + FixedDecimal(units: basisPoints, decimals: 2).description
        }
    }
}
