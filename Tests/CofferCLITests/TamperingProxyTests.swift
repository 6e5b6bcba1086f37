import BlockingTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The test proxy itself: tests run in parallel in one process, so a helper that closes a
/// descriptor it no longer owns breaks whichever test holds that number next.
@Suite("Tampering proxy")
struct TamperingProxyTests {
    @Test("stopping twice leaves a file opened in between alone, and a stopped proxy refuses connections")
    func stopTwice() throws {
        let proxy = try TamperingProxy(upstreamPort: 9)
        let port = proxy.port
        proxy.stop()
        // The lowest free number is taken: the one the proxy's listener had, if nothing else took it.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-\(UUID().uuidString)").path
        defer { unlink(path) }
        let written = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        try #require(written >= 0)
        #expect(write(written, "kept", 4) == 4)
        proxy.stop()
        var info = stat()
        #expect(fstat(written, &info) == 0, "the second stop closed a descriptor it did not own (errno \(errno))")
        close(written)
        #expect(!Self.connects(port: port))
    }

    private static func connects(port: Int) -> Bool { LoopbackSocket.accepts(port: port) }
}
