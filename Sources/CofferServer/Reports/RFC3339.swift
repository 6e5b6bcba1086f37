import Foundation

/// Reads an RFC 3339 time — `2026-11-24T08:00:00Z`, `2026-11-24T09:00:00.250+01:00` — over its
/// bytes: no formatter, no calendar, no allocation. A report batch has twenty of them, and
/// Foundation's ISO 8601 parser was a tenth of a batch's time.
enum RFC3339 {
    /// The time, or nil for anything that is not exactly `YYYY-MM-DD(T|t)HH:MM:SS[.F+](Z|z|±HH:MM)`
    /// with a real date (years 1970 to 9999, no leap second).
    static func date(_ text: some StringProtocol) -> Date? {
        // A native string's bytes are read in place; others are copied first.
        if let date = text.utf8.withContiguousStorageIfAvailable({ date(bytes: $0) }) { return date }
        return Array(text.utf8).withUnsafeBufferPointer { date(bytes: $0) }
    }

    /// The time written in `bytes`, as ``date(_:)`` reads it.
    static func date(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for byte in bytes[start..<start + count] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] | 0x20 == UInt8(ascii: "t"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              (1970...9999).contains(year), (1...12).contains(month), (1...daysIn(month, of: year)).contains(day),
              hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        var fraction = 0.0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offset = 0
        if bytes[index] | 0x20 == UInt8(ascii: "z") {
            index += 1
        } else {
            guard bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"), index + 6 == bytes.count,
                  bytes[index + 3] == UInt8(ascii: ":"), let hours = number(index + 1, 2), let minutes = number(index + 4, 2),
                  hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 60 + minutes) * 60 * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        }
        guard index == bytes.count else { return nil }
        let seconds = daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days-from-civil).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
