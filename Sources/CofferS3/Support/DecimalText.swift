/// Non-negative decimal numbers written by the store (`Content-Length`, `Content-Range`, `<Size>`).
///
/// ASCII digits only, no sign, no spaces, and a value that does not fit in `Int64` is refused rather
/// than wrapped or trapped on: these numbers come from outside.
enum DecimalText {
    /// The value of `text`, or nil when it is empty, holds anything but digits, or overflows.
    static func int64<Text: StringProtocol>(_ text: Text) -> Int64? {
        guard !text.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in text.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times10, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            value = sum
        }
        return value
    }
}
