import Foundation

/// The `Retry-After` of a refusal, read as RFC 9110's delay-seconds: ASCII digits only.
///
/// A server or anything in front of it writes this header, so it is outside input: `nan`, `inf`,
/// `1e9`, `0x10` or a negative number would pass `Double(_:)` and reach arithmetic that traps (a
/// `UInt64` made from NaN ends the app). An HTTP date or anything else not digits gives nil, so
/// the caller falls back to its own backoff; a longer wait than ``longest`` is cut to it.
package enum RetryAfter {
    /// The longest wait a header may ask for (a day).
    package static let longest: TimeInterval = 86_400

    /// The seconds `value` asks to wait, or nil when it is not delay-seconds.
    package static func seconds(_ value: String?) -> TimeInterval? {
        guard let digits = value?.trimmingCharacters(in: .whitespaces).utf8, !digits.isEmpty,
              digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        var seconds = 0
        for digit in digits {
            seconds = min(seconds * 10 + Int(digit - UInt8(ascii: "0")), Int(longest))
        }
        return TimeInterval(seconds)
    }
}
