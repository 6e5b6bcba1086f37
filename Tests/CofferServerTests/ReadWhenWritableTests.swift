import Foundation
import NIOCore
import NIOEmbedded
import Testing
#if canImport(Glibc)
import Glibc
#endif

@testable import CofferServer

/// The device listener's back-pressure (``ReadWhenWritable``): a client that sends requests and
/// never reads the answers must not make the server queue answers without bound.
@Suite("Reading a connection only while its answers can be written")
struct ReadWhenWritableTests {
    /// Counts the reads that reach the socket (it sits between the socket and the handler tested).
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    @Test("no read while the unsent answers are over the high-water mark; the read asked for meanwhile is made once they drain")
    func readsOnlyWhileWritable() throws {
        let counter = ReadCounter()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.pipeline.syncOperations.addHandler(ReadWhenWritable())

        channel.read()
        #expect(counter.reads == 1, "a writable connection is read")

        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        channel.read()
        channel.read()
        #expect(counter.reads == 1, "nothing is read while the client does not take its answers")

        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        #expect(counter.reads == 2, "once they drain, one read is made for those asked for meanwhile")
        channel.pipeline.fireChannelWritabilityChanged()
        #expect(counter.reads == 2, "and only one")
        channel.read()
        #expect(counter.reads == 3)
        _ = try channel.finish()
    }

    @Test("a client that sends requests without reading the answers is stopped: the device port stops reading it")
    func deviceListenerStopsReading() async throws {
        let server = try await TestServer.start { $0.devicePort = 0 }
        defer { Task { try? await server.stop() } }
        let port = try #require(server.app.storage[DeviceListener.Key.self]?.port)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        // A small receive buffer: the answers back up at once.
        var small: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)

        // Small requests answered without the database (404), ~200 bytes an answer for 38 sent.
        let requests = [UInt8](String(repeating: "GET /nothing HTTP/1.1\r\nHost: a\r\n\r\n", count: 2000).utf8)
        var sent = 0, stalledSince: Date?
        let deadline = Date().addingTimeInterval(120)
        // Sends until the server has stopped taking bytes for 3 s (its socket buffers full, nothing
        // read), or 256 MiB went in (a server that reads on queues every answer in memory).
        while sent < 256 << 20, Date() < deadline {
            let n = requests.withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                sent += n
                stalledSince = nil
                continue
            }
            try #require(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "the connection stays open: errno \(errno)")
            if let since = stalledSince {
                if Date().timeIntervalSince(since) >= 3 { break }
            } else {
                stalledSince = Date()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(stalledSince.map { Date().timeIntervalSince($0) >= 3 } == true,
                "the server stopped reading a client that does not read; it took \(sent >> 20) MiB of requests")
        #expect(sent < 64 << 20, "what it took before stopping is bounded by socket buffers: \(sent >> 20) MiB")
    }
}
