@testable import CofferServer
import Foundation
import Testing

/// Dates as every dashboard page shows them: UTC to the minute, whatever the server's time zone.
@Suite("Dashboard dates")
struct PageDateTests {
    @Test("a date is yyyy-MM-dd HH:mm UTC, cut (not rounded) to the minute; no date is empty")
    func format() {
        // 2026-11-22 20:15:59 UTC: the seconds are cut, not rounded up to 20:16.
        #expect(CollectionPage.date(Date(timeIntervalSince1970: 1_795_378_559)) == "2026-11-22 20:15 UTC")
        #expect(CollectionPage.date(Date(timeIntervalSince1970: 0)) == "1970-01-01 00:00 UTC")
        // A leap day and a single-digit month, hour and minute keep their zeros.
        #expect(CollectionPage.date(Date(timeIntervalSince1970: 1_709_168_640)) == "2024-02-29 01:04 UTC")
        #expect(CollectionPage.date(nil) == "")
    }

    @Test("dates format the same from many threads at once")
    func concurrent() async {
        let expected = CollectionPage.date(Date(timeIntervalSince1970: 1_795_378_559))
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    (0..<200).allSatisfy { _ in CollectionPage.date(Date(timeIntervalSince1970: 1_795_378_559)) == expected }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0 })
    }
}
