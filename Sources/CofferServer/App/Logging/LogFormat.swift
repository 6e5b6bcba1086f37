import Logging

/// How `coffer-server` writes its log (`--log-format`, LOG_FORMAT): `text` for people (the
/// default), `json` for machines, one JSON object per line.
public enum LogFormat: String, Sendable, CaseIterable {
    case text
    case json
}

extension SettingRule where Value == Logger.Level {
    /// swift-log's (and Vapor's) level names, in any case.
    static var logLevel: SettingRule {
        let names = Logger.Level.allCases.map(\.rawValue)
        return SettingRule(accepts: "one of " + names.joined(separator: ", ")) { Logger.Level(rawValue: $0.lowercased()) }
    }
}

extension SettingRule where Value == LogFormat {
    /// `text` or `json`.
    static var logFormat: SettingRule {
        SettingRule(accepts: "text or json") { LogFormat(rawValue: $0.lowercased()) }
    }
}
