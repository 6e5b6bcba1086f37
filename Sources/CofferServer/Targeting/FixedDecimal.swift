/// A non-negative decimal number written plainly in a rule (`4`, `12.5`, `0.25`), held exactly as a
/// whole number of its smallest unit so that it prints back as it was parsed.
struct FixedDecimal: Sendable, Equatable, CustomStringConvertible {
    /// The value times 10^`decimals`.
    let units: Int
    /// How many decimals the value keeps.
    let decimals: Int

    /// The number `units` / 10^`decimals`.
    init(units: Int, decimals: Int) {
        self.units = units
        self.decimals = decimals
    }

    /// The number in `text`: ASCII digits, then optionally `.` and digits; at most `decimals`
    /// decimals once trailing zeros are dropped, and no more than `maximum` before the point.
    /// Anything else (signs, exponents, `inf`, spaces) is nil.
    init?(_ text: Substring, decimals: Int, maximum: Int) {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard Self.isDigits(parts[0]) else { return nil }
        var whole = 0
        for byte in parts[0].utf8 {
            whole = whole * 10 + Int(byte - UInt8(ascii: "0"))
            guard whole <= maximum else { return nil }
        }
        var fraction = parts.count == 2 ? parts[1] : ""
        if parts.count == 2 {
            guard Self.isDigits(fraction) else { return nil }
            while fraction.last == "0" { fraction = fraction.dropLast() }
            guard fraction.count <= decimals else { return nil }
        }
        let padded = fraction + String(repeating: "0", count: decimals - fraction.count)
        self.init(units: whole * Self.scale(decimals) + (Int(padded) ?? 0), decimals: decimals)
    }

    /// Whether `text` is a non-empty run of ASCII digits.
    private static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// 10^`decimals`.
    private static func scale(_ decimals: Int) -> Int {
        (0..<decimals).reduce(1) { product, _ in product * 10 }
    }

    /// The value as a `Double`, for comparing with what a device reports.
    var doubleValue: Double { Double(units) / Double(Self.scale(decimals)) }

    /// The shortest plain form: `12.5`, `4`, `0.01`.
    var description: String {
        let scale = Self.scale(decimals)
        let whole = String(units / scale)
        guard units % scale != 0 else { return whole }
        var fraction = String(units % scale)
        fraction = String(repeating: "0", count: decimals - fraction.count) + fraction
        while fraction.last == "0" { fraction.removeLast() }
        return whole + "." + fraction
    }
}
