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

    private static func connects(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
