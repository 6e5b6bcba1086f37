import Foundation
import Testing

@testable import CofferServer

/// The in-memory budgets behind every 429: windows aligned to the clock, counted per key, nothing
/// counted by a refusal or a look, and a new window that starts every key afresh.
@Suite("Rate limiter")
struct RateLimiterTests {
    /// 12:00:00 UTC on a day: the start of a one-minute window.
    let start = Date(timeIntervalSince1970: 1_795_000_800)

    @Test("a key gets its budget per window; a refusal counts nothing and says how long to wait")
    func budgetPerWindow() {
        let limiter = RateLimiter(perMinute: 3)
        #expect(limiter.acquire("device:a", now: start) == nil)
        #expect(limiter.acquire("device:a", cost: 2, now: start.addingTimeInterval(10)) == nil)
        // Full: refused with the seconds left in the window (50), whatever the cost asked.
        #expect(limiter.acquire("device:a", now: start.addingTimeInterval(10)) == 50)
        #expect(limiter.acquire("device:a", cost: 1, now: start.addingTimeInterval(59.5)) == 1)
        // Another key has a budget of its own.
        #expect(limiter.acquire("device:b", cost: 3, now: start.addingTimeInterval(20)) == nil)
        #expect(limiter.acquire("device:b", now: start.addingTimeInterval(20)) == 40)
        // The next window starts both afresh.
        #expect(limiter.acquire("device:a", cost: 3, now: start.addingTimeInterval(60)) == nil)
        #expect(limiter.acquire("device:b", now: start.addingTimeInterval(61)) == nil)
    }

    @Test("a cost above what is left is refused whole, and the rest stays usable")
    func costAboveWhatIsLeft() {
        let limiter = RateLimiter(perMinute: 20)
        #expect(limiter.acquire("app:x", cost: 15, now: start) == nil)
        #expect(limiter.acquire("app:x", cost: 6, now: start) != nil)
        #expect(limiter.acquire("app:x", cost: 5, now: start) == nil)
        #expect(limiter.acquire("app:x", cost: 1, now: start) != nil)
        // A cost larger than the whole budget never passes (and never overflows).
        #expect(RateLimiter(perMinute: 20).acquire("app:y", cost: .max, now: start) != nil)
    }

    @Test("exhausted looks without counting; failures counted with acquire")
    func exhaustedLooksOnly() {
        let limiter = RateLimiter(perMinute: 2)
        for _ in 0..<10 { #expect(limiter.exhausted("address:1", now: start) == nil) }
        _ = limiter.acquire("address:1", now: start)
        #expect(limiter.exhausted("address:1", now: start) == nil)
        _ = limiter.acquire("address:1", now: start)
        #expect(limiter.exhausted("address:1", now: start.addingTimeInterval(30)) == 30)
        #expect(limiter.exhausted("address:1", now: start.addingTimeInterval(60)) == nil)
    }

    @Test("a window with a hundred thousand keys gives way to the next, which starts empty")
    func manyKeys() {
        let limiter = RateLimiter(perMinute: 1)
        #expect((0..<100_000).filter { limiter.acquire("device:\($0)", now: start) != nil }.isEmpty)
        #expect(limiter.acquire("device:99999", now: start) != nil)
        let next = start.addingTimeInterval(60)
        #expect((0..<1_000).filter { limiter.acquire("device:\($0)", now: next) != nil }.isEmpty)
        #expect(limiter.acquire("device:0", now: next) != nil)
    }
}
