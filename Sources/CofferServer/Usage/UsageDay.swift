import Foundation

/// A UTC calendar day, as days since 1970-01-01: cheap to take on a hot path (no calendar, no
/// formatter), written to the database as `YYYY-MM-DD`, which sorts as the days do.
struct UsageDay: Sendable, Hashable, Comparable, Strideable {
    let number: Int

    init(number: Int) { self.number = number }

    /// The UTC day of `date`.
    init(_ date: Date = Date()) {
        number = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
    }

    /// Parses `YYYY-MM-DD` (a UTC day); nil when it is not one.
    init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
              calendar.component(.day, from: date) == day
        else { return nil }
        self.init(date)
    }

    /// Midnight UTC at the start of the day.
    var start: Date { Date(timeIntervalSince1970: Double(number) * 86_400) }

    /// `YYYY-MM-DD`.
    var text: String {
        // Civil-from-days (Howard Hinnant's algorithm): exact for every day after 1970.
        let z = number + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return String(format: "%04d-%02d-%02d", year, month, day)
    }

    static func < (lhs: UsageDay, rhs: UsageDay) -> Bool { lhs.number < rhs.number }
    func distance(to other: UsageDay) -> Int { other.number - number }
    func advanced(by n: Int) -> UsageDay { UsageDay(number: number + n) }
}
