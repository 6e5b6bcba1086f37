/// The operator of a clause. `=` and `!=` take a comma list (any of / none of); the others take one value.
enum ComparisonOperator: String, CaseIterable, Sendable {
    /// `=`: equal to one of the values.
    case equal = "="
    /// `!=`: equal to none of the values.
    case notEqual = "!="
    /// `<`: below the value.
    case less = "<"
    /// `<=`: below or equal to the value.
    case lessOrEqual = "<="
    /// `>`: above the value.
    case greater = ">"
    /// `>=`: above or equal to the value.
    case greaterOrEqual = ">="

    /// Whether the operator compares for (in)equality, and so takes a comma list.
    var takesList: Bool { self == .equal || self == .notEqual }

    /// Whether `value` stands in this relation to `operands`: `=` to any of them, `!=` to none of
    /// them, an ordering to every one of them (the parser allows only one).
    func holds<Value: Comparable>(_ value: Value, against operands: [Value]) -> Bool {
        switch self {
        case .equal: operands.contains(value)
        case .notEqual: !operands.contains(value)
        case .less: operands.allSatisfy { value < $0 }
        case .lessOrEqual: operands.allSatisfy { value <= $0 }
        case .greater: operands.allSatisfy { value > $0 }
        case .greaterOrEqual: operands.allSatisfy { value >= $0 }
        }
    }

    /// Whether `operands` satisfy `matches` in the way `=` or `!=` asks: some operand matches (`=`),
    /// or none does (`!=`). For the orderings, which need a comparable value, this is false.
    func holds<Operand>(for operands: [Operand], where matches: (Operand) -> Bool) -> Bool {
        switch self {
        case .equal: operands.contains(where: matches)
        case .notEqual: !operands.contains(where: matches)
        default: false
        }
    }
}
