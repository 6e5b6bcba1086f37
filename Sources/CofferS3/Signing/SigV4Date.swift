import Foundation

/// The two date forms of Signature Version 4, in UTC: `20130524T000000Z` (`x-amz-date`) and
/// `20130524` (the credential scope). Computed from the time's seconds, without a formatter or
/// locale, so that signing is pure and the same on every platform.
struct SigV4Date: Equatable {
    /// `YYYYMMDD'T'HHMMSS'Z'`.
    let timestamp: String
    /// `YYYYMMDD`.
    let day: String

    /// The forms of `date`, rounded down to the second. Dates before year 0 or after 9999 are clamped
    /// into that range (a signature needs four-digit years; no real clock is there).
    init(_ date: Date) {
        let limit = 253_402_300_799.0 // 9999-12-31T23:59:59Z
        let seconds = Int64(min(max(date.timeIntervalSince1970.rounded(.down), -62_167_219_200), limit))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, dayOfMonth) = Self.civil(fromDays: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        day = pad(year, 4) + pad(month, 2) + pad(dayOfMonth, 2)
        timestamp = day + "T" + pad(secondOfDay / 3600, 2) + pad(secondOfDay / 60 % 60, 2) + pad(secondOfDay % 60, 2) + "Z"
    }

    /// Year, month and day of the proleptic Gregorian calendar for days since 1970-01-01
    /// (the well-known days-to-civil conversion over 400-year eras).
    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
