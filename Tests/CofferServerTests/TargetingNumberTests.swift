import Testing

@testable import CofferServer

/// Numbers in targeting rules and device queries come from outside: huge ones are refused, never a trap.
@Suite("Targeting numbers")
struct TargetingNumberTests {
    @Test("FixedDecimal refuses digits past its maximum or past Int, whatever the maximum")
    func fixedDecimal() {
        let many = Substring(String(repeating: "9", count: 400))
        #expect(FixedDecimal(many, decimals: 3, maximum: .max) == nil)
        #expect(FixedDecimal("9223372036854775807", decimals: 0, maximum: .max) == FixedDecimal(units: .max, decimals: 0))
        #expect(FixedDecimal("9223372036854775808", decimals: 0, maximum: .max) == nil)
        #expect(FixedDecimal("9223372036854775807", decimals: 2, maximum: .max) == nil, "scaling overflows")
        #expect(FixedDecimal("100.5", decimals: 2, maximum: 100) == FixedDecimal(units: 10050, decimals: 2))
        #expect(FixedDecimal("101", decimals: 2, maximum: 100) == nil)
        #expect(FixedDecimal("12.5", decimals: 3, maximum: 1 << 20)?.description == "12.5")
    }

    @Test("Version refuses components past 999999 and too many digits without overflowing")
    func version() {
        #expect(Version(String(repeating: "9", count: 400)) == nil)
        #expect(Version("999999.999999.999999.999999")?.description == "999999.999999.999999.999999")
        #expect(Version("1000000") == nil)
        #expect(Version("0000000000000000000000000017.4")?.description == "17.4")
    }
}
