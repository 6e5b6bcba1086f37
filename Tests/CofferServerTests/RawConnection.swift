import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP connection that sends bytes exactly as given and keeps every byte that comes back: for
/// what an HTTP client library would not send (pipelined requests, broken request lines).
final class RawConnection: Sendable {
    private let channel: any Channel
    private let received: NIOLockedValueBox<(bytes: [UInt8], closed: Bool)>

    private init(channel: any Channel, received: NIOLockedValueBox<(bytes: [UInt8], closed: Bool)>) {
        self.channel = channel
        self.received = received
    }

    static func connect(port: Int) async throws -> RawConnection {
        let received = NIOLockedValueBox<(bytes: [UInt8], closed: Bool)>(([], false))
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Collector(received: received)) }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return RawConnection(channel: channel, received: received)
    }

    func send(_ text: String) async throws {
        try await channel.writeAndFlush(channel.allocator.buffer(string: text)).get()
    }

    func send(bytes: some Sequence<UInt8>) async throws {
        try await channel.writeAndFlush(channel.allocator.buffer(bytes: Array(bytes))).get()
    }

    /// Waits (up to `seconds`) until `done` holds for what arrived, or the server closes; returns
    /// the text so far and whether the connection is closed.
    func wait(seconds: Double = 30, until done: (String) -> Bool) async throws -> (text: String, closed: Bool) {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let (bytes, closed) = received.withLockedValue { $0 }
            let text = String(decoding: bytes, as: UTF8.self)
            if done(text) || closed || Date() > deadline { return (text, closed) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Every byte that arrived so far, exactly (``wait(seconds:until:)`` decodes them as text).
    var receivedBytes: [UInt8] { received.withLockedValue { $0.bytes } }

    func close() async {
        try? await channel.close()
    }

    /// Closes the sending side only (a half-close): the server sees the end of input, and what it
    /// still sends arrives.
    func closeOutput() async throws {
        try await channel.close(mode: .output)
    }

    /// The status codes of the responses in `text`, in order.
    static func statuses(_ text: String) -> [Int] {
        text.split(separator: "HTTP/1.1 ", omittingEmptySubsequences: false).dropFirst().compactMap { Int($0.prefix(3)) }
    }

    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let received: NIOLockedValueBox<(bytes: [UInt8], closed: Bool)>
        init(received: NIOLockedValueBox<(bytes: [UInt8], closed: Bool)>) { self.received = received }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = Array(buffer: unwrapInboundIn(data))
            received.withLockedValue { $0.bytes += bytes }
        }

        func channelInactive(context: ChannelHandlerContext) {
            received.withLockedValue { $0.closed = true }
        }
    }
}
