@testable import Coffer
import Foundation
import Testing

/// What a follower of a download may read (``PartProgress``): bytes on disk, until the file starts again.
@Suite("Part file progress")
struct PartProgressTests {
    /// Waits on a thread of its own, as the follower does (a blocked task would hold one of the
    /// Swift pool's few threads); the reason it stopped, nil when the bytes arrived.
    static func wait(_ progress: PartProgress, until end: UInt64) async -> PartProgress.Stop? {
        await withCheckedContinuation { continuation in
            Thread {
                do throws(PartProgress.Stop) {
                    try progress.wait(until: end)
                    continuation.resume(returning: nil)
                } catch {
                    continuation.resume(returning: error)
                }
            }.start()
        }
    }

    @Test("a read waits for its bytes, and is woken when they land")
    func waitsForBytes() async throws {
        let progress = PartProgress()
        progress.advance(to: 10)
        try progress.wait(until: 10)
        async let woken = Self.wait(progress, until: 100)
        try await Task.sleep(nanoseconds: 50_000_000)
        progress.advance(to: 50)   // not enough yet
        progress.advance(to: 20)   // never backwards
        progress.advance(to: 100)
        #expect(await woken == nil)
    }

    @Test("a rewound file stops every read for good, even of bytes once there; a closed one stops reads past its end")
    func rewindAndClose() async throws {
        let rewound = PartProgress()
        rewound.advance(to: 100)
        async let waiting = Self.wait(rewound, until: 1_000)
        try await Task.sleep(nanoseconds: 50_000_000)
        rewound.rewind()
        #expect(await waiting == .rewound)
        #expect(throws: PartProgress.Stop.rewound) { try rewound.wait(until: 10) }
        rewound.advance(to: 2_000)
        #expect(throws: PartProgress.Stop.rewound) { try rewound.wait(until: 10) }
        #expect(rewound.wasRewound)

        let closed = PartProgress()
        closed.advance(to: 100)
        closed.close()
        try closed.wait(until: 100)
        #expect(throws: PartProgress.Stop.closed) { try closed.wait(until: 101) }
        #expect(!closed.wasRewound)
    }
}
