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
        // Checked arithmetic: the digits come from a request, and no `maximum` may let them trap.
        var whole = 0
        for byte in parts[0].utf8 {
            let (times10, overflow1) = whole.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2, sum <= maximum else { return nil }
            whole = sum
        }
        var fraction = parts.count == 2 ? parts[1] : ""
        if parts.count == 2 {
            guard Self.isDigits(fraction) else { return nil }
            while fraction.last == "0" { fraction = fraction.dropLast() }
            guard fraction.count <= decimals else { return nil }
        }
        let padded = fraction + String(repeating: "0", count: decimals - fraction.count)
        let (scaled, overflow1) = whole.multipliedReportingOverflow(by: Self.scale(decimals))
        let (units, overflow2) = scaled.addingReportingOverflow(Int(padded) ?? 0)
        guard !overflow1, !overflow2 else { return nil }
        self.init(units: units, decimals: decimals)
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
