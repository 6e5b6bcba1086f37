import Foundation

/// The timestamps of S3 listings (`2013-05-24T00:00:00.000Z`): UTC, with optional fractional seconds.
/// Read by hand so that an odd value is refused instead of guessed at, and no formatter is shared
/// between threads.
enum ISO8601Time {
    /// The time `text` names, or nil for anything but `YYYY-MM-DDTHH:MM:SS[.fraction]Z` with fields in range.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            DecimalText.int64(String(decoding: bytes[range], as: UTF8.self))
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction = 0.0
        if bytes.count > 20 {
            // `.digits` between the seconds and the `Z`.
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21 else { return nil }
            let digits = bytes[20..<(bytes.count - 1)]
            guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let value = Double(String(decoding: digits, as: UTF8.self))
            else { return nil }
            fraction = value / pow(10, Double(digits.count))
        } else if bytes[19] != UInt8(ascii: "Z") {
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3600 + minute * 60 + second) + fraction)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (the inverse of ``SigV4Date/civil(fromDays:)``).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
