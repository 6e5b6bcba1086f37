import Foundation

/// How one setting's text is read, and what it accepts (the words of its ``SettingError``).
///
/// Strict: numbers are ASCII digits (and one point for durations) and nothing else, so `80a`,
/// `+5`, `-1`, `1e3`, `0x10`, ` 5`, `nan` and `inf` are refused rather than read as something else.
struct SettingRule<Value> {
    /// What the setting accepts, as it ends "… must be ACCEPTS".
    let accepts: String
    /// The value in the text, or nil when the text is not one the setting accepts.
    let read: (String) -> Value?

    /// The same rule, its value changed by `transform`.
    func map<Other>(_ transform: @escaping (Value) -> Other) -> SettingRule<Other> {
        SettingRule<Other>(accepts: accepts) { read($0).map(transform) }
    }

    /// The same rule with a further check (and its own words); a value failing it is refused.
    func checked(_ accepts: String, _ check: @escaping (Value) -> Bool) -> SettingRule<Value> {
        SettingRule(accepts: accepts) { text in read(text).flatMap { check($0) ? $0 : nil } }
    }

    /// Whether `text` is one or more ASCII digits.
    static func isDigits(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}

extension SettingRule where Value == Int64 {
    /// A whole number in `range` (ASCII digits only; too many digits is out of range, not a trap).
    static func integer(in range: ClosedRange<Int64>, _ accepts: String) -> SettingRule {
        SettingRule(accepts: accepts) { text in
            guard isDigits(text), let value = Int64(text), range.contains(value) else { return nil }
            return value
        }
    }

    /// A size in bytes, at least 1.
    static var bytes: SettingRule { integer(in: 1...Int64.max, "a whole number of bytes, at least 1") }
}

extension SettingRule where Value == Int {
    /// A TCP port (0 picks a free one).
    static var port: SettingRule {
        SettingRule<Int64>.integer(in: 0...65535, "a whole number from 0 to 65535").map { Int($0) }
    }

    /// A count from `minimum` to `maximum`, by default 2^31 - 1 (rate limits and the like).
    static func count(atLeast minimum: Int, atMost maximum: Int = Int(Int32.max)) -> SettingRule {
        SettingRule<Int64>.integer(in: Int64(minimum)...Int64(maximum), "a whole number from \(minimum) to \(maximum)")
            .map { Int($0) }
    }
}

extension SettingRule where Value == TimeInterval {
    /// The longest duration any setting accepts: 100 years. Longer would not fit the timers it sets.
    static var longest: TimeInterval { 100 * 365 * 86_400 }

    /// A duration written in `unitName` (`unit` seconds each), as seconds: digits with at most one
    /// point, finite, above 0 (or 0 when `zero` says what 0 means), at most `maximum` units
    /// (``longest`` by default).
    static func duration(_ unitName: String, of unit: TimeInterval, zero: String? = nil, maximum: Double? = nil) -> SettingRule {
        let most = maximum ?? (longest / unit).rounded(.down)
        let accepts = zero.map { "a number of \(unitName) from 0 (\($0)) to \(Int64(most))" }
            ?? "a number of \(unitName) above 0, at most \(Int64(most))"
        return SettingRule(accepts: accepts) { text in
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count <= 2, parts.allSatisfy({ $0.isEmpty || isDigits($0) }), parts.contains(where: { !$0.isEmpty }),
                  let value = Double(text), value.isFinite, value <= most, value > 0 || (zero != nil && value == 0)
            else { return nil }
            return value * unit
        }
    }
}

extension SettingRule where Value == Bool {
    /// `1`, `0`, `true`, `false`, `yes` or `no`, in any case.
    static var boolean: SettingRule {
        SettingRule(accepts: "1, 0, true, false, yes or no") { text in
            switch text.lowercased() {
            case "1", "true", "yes": return true
            case "0", "false", "no": return false
            default: return nil
            }
        }
    }
}

extension SettingRule where Value == String {
    /// Any text that is not empty (names, paths, lists checked elsewhere).
    static var text: SettingRule { SettingRule(accepts: "not empty") { $0.isEmpty ? nil : $0 } }

    /// An absolute URL with one of `schemes` and a host, no spaces, no query and no fragment; a user
    /// and password only when `allowsUser`.
    static func url(schemes: [String], allowsUser: Bool = false, _ accepts: String) -> SettingRule {
        SettingRule(accepts: accepts) { text in
            guard !text.contains(where: \.isWhitespace), let components = URLComponents(string: text),
                  let scheme = components.scheme?.lowercased(), schemes.contains(scheme),
                  let host = components.host, !host.isEmpty, components.query == nil, components.fragment == nil,
                  allowsUser || (components.user == nil && components.password == nil)
            else { return nil }
            return text
        }
    }
}
