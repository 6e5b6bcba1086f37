extension TargetingClause {
    /// The most values a comma list may hold.
    static let maximumListItems = 50
    /// The most characters one value may have.
    static let maximumValueLength = 100
    /// The largest amount of memory a rule may name, in GiB.
    static let maximumMemoryGiB = 1_000_000

    /// The clause written in `clause`, which is trimmed and not empty: `NAME OP VALUE`.
    init(parsing clause: Substring) throws(TargetingError) {
        let (name, op, value) = try Self.split(clause)
        let attribute = try TargetingAttribute(name: name, clause: clause)
        guard attribute.operators.contains(op) else {
            let allowed = attribute.operators.map(\.rawValue)
            let takes = allowed.count == 1 ? "takes only \(allowed[0])" : "takes \(allowed.joined(separator: " or "))"
            throw .inClause("\(attribute.name) \(takes), not \(op.rawValue)", clause)
        }
        let values = try Self.values(value, op: op, clause: clause)
        self = try Self.interpret(values, attribute: attribute, op: op, clause: clause)
    }

    /// The name, operator and value of `clause`: the operator is the first of `= ! < >` in it.
    private static func split(_ clause: Substring) throws(TargetingError) -> (Substring, ComparisonOperator, Substring) {
        let utf8 = clause.utf8
        guard let start = utf8.firstIndex(where: isOperatorByte) else {
            throw .inClause("no operator (use =, !=, <, <=, >, >=)", clause)
        }
        let next = utf8.index(after: start)
        let pairedWithEqual = next < utf8.endIndex && utf8[next] == UInt8(ascii: "=")
        let op: ComparisonOperator
        switch utf8[start] {
        case UInt8(ascii: "!"):
            guard pairedWithEqual else { throw .inClause("'!' must be followed by '='", clause) }
            op = .notEqual
        case UInt8(ascii: "<"): op = pairedWithEqual ? .lessOrEqual : .less
        case UInt8(ascii: ">"): op = pairedWithEqual ? .greaterOrEqual : .greater
        default: op = .equal
        }
        let end = op.rawValue.utf8.count == 2 ? utf8.index(after: next) : next
        let name = TargetingText.trimmed(clause[..<start])
        guard !name.isEmpty else { throw .inClause("missing attribute name before \(op.rawValue)", clause) }
        return (name, op, TargetingText.trimmed(clause[end...]))
    }

    /// Whether `byte` is one of the characters operators are made of.
    private static func isOperatorByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "=") || byte == UInt8(ascii: "!") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">")
    }

    /// The values in `value`, split at commas and trimmed, after checking the list and value limits.
    private static func values(_ value: Substring, op: ComparisonOperator, clause: Substring) throws(TargetingError) -> [Substring] {
        guard !value.isEmpty else { throw .inClause("missing value after \(op.rawValue)", clause) }
        guard !value.utf8.contains(where: isOperatorByte) else { throw .inClause("more than one operator", clause) }
        let items = TargetingText.split(value, on: ",")
        guard items.count <= maximumListItems else {
            throw .inClause("a list of \(items.count) values (the limit is \(maximumListItems))", clause)
        }
        guard op.takesList || items.count == 1 else { throw .inClause("\(op.rawValue) takes one value, not a list", clause) }
        var values: [Substring] = []
        for item in items {
            let value = TargetingText.trimmed(item)
            guard !value.isEmpty else { throw .inClause("an empty value in the list", clause) }
            guard TargetingText.length(of: value, upTo: maximumValueLength) <= maximumValueLength else {
                throw .inClause("a value longer than \(maximumValueLength) characters", clause)
            }
            values.append(value)
        }
        return values
    }

    /// The clause about `attribute`, with each of `values` checked and normalised for it.
    private static func interpret(
        _ values: [Substring], attribute: TargetingAttribute, op: ComparisonOperator, clause: Substring
    ) throws(TargetingError) -> TargetingClause {
        /// `values` converted by `convert`; the first that does not convert is an error saying `problem`.
        func each<T>(_ convert: (Substring) -> T?, _ problem: (String) -> String) throws(TargetingError) -> [T] {
            var converted: [T] = []
            for value in values {
                guard let result = convert(value) else { throw .inClause(problem(TargetingText.quoted(value)), clause) }
                converted.append(result)
            }
            return converted
        }
        switch attribute {
        case .deviceClass:
            return .text(.deviceClass, op, try each({ DeviceClass(named: $0)?.rawValue }) {
                "unknown device class \($0) (use \(DeviceClass.listed))"
            })
        case .osName:
            return .text(.osName, op, values.map(String.init))
        case .region:
            return .text(.region, op, try each(Self.region) { "\($0) is not a region (use two letters like US, or three digits like 419)" })
        case .arch:
            return .text(.arch, op, try each({ TargetingText.isCustomName($0) ? $0.lowercased() : nil }) {
                "\($0) is not an architecture (use a name like arm64 or x86_64)"
            })
        case .custom(let name):
            return .text(.custom(name), op, values.map(String.init))
        case .language:
            return .language(op, try each(LanguageRange.init) { "\($0) is not a language tag (use BCP 47 like en or en-GB)" })
        case .osVersion, .appVersion:
            let versions = try each({ Version(String($0)) }) { "\($0) is not a version (use numbers like 17.4)" }
            return .version(attribute == .osVersion ? .osVersion : .appVersion, op, versions)
        case .memory:
            return .memory(op, try each({ FixedDecimal($0, decimals: 3, maximum: maximumMemoryGiB) }) {
                "\($0) is not an amount of memory (use GiB like 4 or 1.5, at most \(maximumMemoryGiB) and 3 decimals)"
            })
        case .rollout:
            guard values.count == 1 else { throw .inClause("rollout takes one percentage, not a list", clause) }
            return .rollout(basisPoints: try each(Self.percentage) {
                "rollout must be a percentage in (0, 100] with at most 2 decimals, not \($0)"
            }[0])
        }
    }

    /// A region code in upper case: two ASCII letters, or three digits (UN M49, e.g. 419).
    private static func region(_ text: Substring) -> String? {
        let bytes = Array(text.utf8)
        let letters = bytes.count == 2 && bytes.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0 | 0x20) }
        let digits = bytes.count == 3 && bytes.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        return letters || digits ? text.uppercased() : nil
    }

    /// A rollout percentage in basis points (10 % = 1000), from `10`, `12.5` or `12.5%`; nil outside (0, 100].
    private static func percentage(_ text: Substring) -> Int? {
        let number = text.hasSuffix("%") ? TargetingText.trimmed(text.dropLast()) : text
        guard let percentage = FixedDecimal(number, decimals: 2, maximum: 100),
              (1...RolloutBucket.count).contains(percentage.units)
        else { return nil }
        return percentage.units
    }
}
