import BlockingTestSupport
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

    @Test("a client that sends requests without reading the answers is stopped: the device port stops reading it, or closes it")
    func deviceListenerStopsReading() async throws {
        let server = try await TestServer.start { $0.devicePort = 0 }
        defer { Task { try? await server.stop() } }
        let port = try #require(server.app.storage[DeviceListener.Key.self]?.port)
        // A small receive buffer: the answers back up at once.
        let fd = try LoopbackSocket.connect(port: port, receiveBuffer: 4096)
        defer { close(fd) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)

        // Small requests answered without the database (404), ~200 bytes an answer for 38 sent.
        let requests = [UInt8](String(repeating: "GET /nothing HTTP/1.1\r\nHost: a\r\n\r\n", count: 2000).utf8)
        var sent = 0, position = 0, stalledSince: Date?, closed = false
        let deadline = Date().addingTimeInterval(120)
        // Sends until the server has stopped taking bytes for 3 s (its socket buffers full, nothing
        // read) or closed the connection, or 64 MiB went in (a server that reads on queues every
        // answer in memory). A partial send goes on from where it stopped: a request cut in two
        // would be a parse error, which closes the connection for another reason.
        while sent < 64 << 20, Date() < deadline {
            let n = requests.withUnsafeBytes { send(fd, $0.baseAddress! + position, $0.count - position, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                sent += n
                position = (position + n) % requests.count
                stalledSince = nil
                continue
            }
            if n < 0, errno == EPIPE || errno == ECONNRESET {
                closed = true
                break
            }
            try #require(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "errno \(errno)")
            if let since = stalledSince {
                if Date().timeIntervalSince(since) >= 3 { break }
            } else {
                stalledSince = Date()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let stalled = stalledSince.map { Date().timeIntervalSince($0) >= 3 } ?? false
        #expect(stalled || closed, "the server stopped reading (or closed) a client that does not read; it took \(sent >> 20) MiB of requests")
        #expect(sent < 64 << 20, "what it took before stopping is bounded by socket buffers: \(sent >> 20) MiB")
    }
}
