import Foundation
import Testing
@testable import CofferServer

/// The manifest endpoint's caches serve an entry being re-checked, but not for ever: an instance
/// whose database stays unreachable stops answering from what it last saw.
@Suite("Cache age")
struct CacheAgeTests {
    @Test("while one request re-checks, the others use the entry; re-checks that keep failing stop that a minute after the first")
    func staleEntriesAreBounded() {
        let confirmed = Date(timeIntervalSince1970: 1_000_000)
        var age = CacheAge(checkedAt: confirmed)
        #expect(admitted(&age, confirmed.addingTimeInterval(0.5), within: 1))
        // Past the freshness: the first request re-checks, the others are served meanwhile.
        let first = confirmed.addingTimeInterval(2)
        #expect(!admitted(&age, first, within: 1))
        #expect(admitted(&age, confirmed.addingTimeInterval(3), within: 1))
        // The re-check failed (no confirm): past the window the next request tries again.
        #expect(!admitted(&age, confirmed.addingTimeInterval(8), within: 1))
        #expect(admitted(&age, confirmed.addingTimeInterval(9), within: 1))
        let last = first.addingTimeInterval(CacheAge.maximumStaleness)
        // Re-checks failing since: a request within the window is still served up to a minute
        // after the first re-check, and none after it.
        #expect(!admitted(&age, last.addingTimeInterval(-2), within: 1))
        #expect(admitted(&age, last.addingTimeInterval(-1), within: 1))
        #expect(!admitted(&age, last.addingTimeInterval(1), within: 1))
        #expect(!admitted(&age, last.addingTimeInterval(2), within: 1), "every request past the bound asks the database")
        // A re-check that succeeds makes it usable again, and starts the bound afresh.
        age.confirm(at: last.addingTimeInterval(3))
        #expect(admitted(&age, last.addingTimeInterval(3.5), within: 1))
        #expect(!admitted(&age, last.addingTimeInterval(5), within: 1))
        #expect(admitted(&age, last.addingTimeInterval(6), within: 1))
    }

    @Test("an entry nobody asked for in an hour serves the requests that come while its first re-check runs")
    func idleEntry() {
        let confirmed = Date(timeIntervalSince1970: 1_000_000)
        var age = CacheAge(checkedAt: confirmed)
        let later = confirmed.addingTimeInterval(3600)
        #expect(!admitted(&age, later, within: 1))
        #expect(admitted(&age, later.addingTimeInterval(0.1), within: 1))
        #expect(admitted(&age, later.addingTimeInterval(4), within: 1))
    }

    @Test("a re-check that confirms late does not move the confirmation back")
    func lateConfirmation() {
        let confirmed = Date(timeIntervalSince1970: 1_000_000)
        var age = CacheAge(checkedAt: confirmed)
        age.confirm(at: confirmed.addingTimeInterval(10))
        age.confirm(at: confirmed.addingTimeInterval(4))
        #expect(age.checkedAt == confirmed.addingTimeInterval(10))
    }

    /// `age.admit(now:within:)`, outside `#expect` (which cannot call a mutating method).
    private func admitted(_ age: inout CacheAge, _ now: Date, within limit: TimeInterval) -> Bool {
        age.admit(now: now, within: limit)
    }
}
