import Foundation
import Testing
@testable import CofferServer

/// The manifest endpoint's caches serve an entry being re-checked, but not for ever: an instance
/// whose database stays unreachable stops answering from what it last saw.
@Suite("Cache age")
struct CacheAgeTests {
    @Test("while one request re-checks, the others use the entry; a re-check that keeps failing stops that past the maximum staleness")
    func staleEntriesAreBounded() {
        let confirmed = Date(timeIntervalSince1970: 1_000_000)
        var age = CacheAge(checkedAt: confirmed)
        #expect(admitted(&age, confirmed.addingTimeInterval(0.5), within: 1))
        // Past the freshness: the first request re-checks, the others are served meanwhile.
        #expect(!admitted(&age, confirmed.addingTimeInterval(2), within: 1))
        #expect(admitted(&age, confirmed.addingTimeInterval(3), within: 1))
        // The re-check failed (no confirm): past the window the next request tries again.
        #expect(!admitted(&age, confirmed.addingTimeInterval(8), within: 1))
        #expect(admitted(&age, confirmed.addingTimeInterval(9), within: 1))
        let last = confirmed.addingTimeInterval(1 + CacheAge.maximumStaleness)
        // Re-checks failing since: a request within the window is still served up to the
        // maximum staleness, and none after it.
        #expect(!admitted(&age, last.addingTimeInterval(-2), within: 1))
        #expect(admitted(&age, last.addingTimeInterval(-1), within: 1))
        #expect(!admitted(&age, last.addingTimeInterval(1), within: 1))
        #expect(!admitted(&age, last.addingTimeInterval(2), within: 1), "every request past the maximum staleness asks the database")
        // A re-check that succeeds makes it usable again.
        age.confirm(at: last.addingTimeInterval(3))
        #expect(admitted(&age, last.addingTimeInterval(3.5), within: 1))
    }

    @Test("the bound counts from the end of the freshness, however long that is")
    func longFreshness() {
        let confirmed = Date(timeIntervalSince1970: 1_000_000)
        var age = CacheAge(checkedAt: confirmed)
        #expect(admitted(&age, confirmed.addingTimeInterval(100), within: 120))
        #expect(!admitted(&age, confirmed.addingTimeInterval(121), within: 120))
        #expect(admitted(&age, confirmed.addingTimeInterval(122), within: 120))
        let last = confirmed.addingTimeInterval(120 + CacheAge.maximumStaleness)
        #expect(!admitted(&age, last.addingTimeInterval(-2), within: 120))
        #expect(admitted(&age, last.addingTimeInterval(-1), within: 120))
        #expect(!admitted(&age, last.addingTimeInterval(1), within: 120))
    }

    /// `age.admit(now:within:)`, outside `#expect` (which cannot call a mutating method).
    private func admitted(_ age: inout CacheAge, _ now: Date, within limit: TimeInterval) -> Bool {
        age.admit(now: now, within: limit)
    }
}
