import BlockingTestSupport
import Foundation
import Testing

/// The `.ownThread` trait (``OwnThreadTrait``): a test given it runs off the cooperative pool,
/// one without it on the pool, and each keeps its own task.
@Suite("Tests on a thread of their own")
struct OwnThreadTests {
    @TaskLocal static var marker = ""

    @Test(".ownThread runs the test's body on a thread of its own", .ownThread)
    func ownThread() {
        #expect(OwnThreadTrait.isCurrentThreadOwn)
        #expect(!Thread.isMainThread)
    }

    @Test("a test without it runs on the pool")
    func pool() {
        #expect(!OwnThreadTrait.isCurrentThreadOwn)
    }

    @Test("each case of a parameterised test runs, after a suspension too, on that thread", .ownThread, arguments: [1, 2, 3])
    func cases(_ number: Int) async throws {
        try await Task.sleep(for: .milliseconds(number))
        #expect(Self.onOwnThread())
        let seen = await Self.$marker.withValue("case \(number)") { await Self.read() }
        #expect(seen == "case \(number)")
        #expect(Self.onOwnThread())
    }

    static func onOwnThread() -> Bool { OwnThreadTrait.isCurrentThreadOwn }

    static func read() async -> String {
        await Task.yield()
        return marker
    }
}
