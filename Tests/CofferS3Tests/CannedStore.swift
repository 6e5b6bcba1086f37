import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A loopback HTTP server that answers every request with what a test scripts, and records what it
/// received: for the answers a real store gives rarely or never on demand (a 200 carrying `<Error>`,
/// a body cut short, an oversized listing, a redirect).
final class CannedStore: @unchecked Sendable {
    /// One scripted answer.
    struct Answer: Sendable {
        var status: HTTPResponseStatus = .ok
        var headers: [(String, String)] = []
        var body = ByteBuffer()
        /// Announce this `Content-Length` instead of the body's own (a body cut short when larger).
        var announcedLength: Int? = nil
        /// Send the body one byte at a time, this long apart (a store that trickles).
        var trickle: TimeAmount? = nil
    }

    /// A request as received.
    struct Received: Sendable {
        let head: HTTPRequestHead
        let body: ByteBuffer
    }

    private let lock = NSLock()
    private var received: [Received] = []
    private let answer: @Sendable (HTTPRequestHead) -> Answer
    private var channel: Channel?

    /// `http://127.0.0.1:PORT`.
    private(set) var endpoint = ""

    init(answer: @escaping @Sendable (HTTPRequestHead) -> Answer) {
        self.answer = answer
    }

    func start() async throws {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler(store: self))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        self.channel = channel
        endpoint = "http://127.0.0.1:\(channel.localAddress?.port ?? 0)"
    }

    func stop() async throws {
        try await channel?.close()
    }

    /// Every request received so far.
    var requests: [Received] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    fileprivate func record(_ head: HTTPRequestHead, _ body: ByteBuffer) -> Answer {
        lock.lock()
        received.append(Received(head: head, body: body))
        lock.unlock()
        return answer(head)
    }

    /// Bytes of trickled bodies sent so far, by every connection.
    var trickledBytes: Int {
        lock.lock()
        defer { lock.unlock() }
        return trickled
    }
    private var trickled = 0

    fileprivate func countTrickled() {
        lock.lock()
        trickled += 1
        lock.unlock()
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let store: CannedStore
        var head: HTTPRequestHead?
        var body = ByteBuffer()

        init(store: CannedStore) { self.store = store }

        /// Writes `body` a byte at a time, `every` apart, then ends the answer; stops when the
        /// client has gone.
        func trickleBody(_ body: ByteBuffer, every interval: TimeAmount, context: ChannelHandlerContext) {
            context.flush()
            let bytes = Array(body.readableBytesView)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let store = self.store
            let sent = NIOLoopBoundBox(0, eventLoop: context.eventLoop)
            context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { task in
                let context = bound.value
                guard context.channel.isActive else { return task.cancel() }
                let index = sent.value
                guard index < bytes.count else {
                    task.cancel()
                    context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
                    return
                }
                context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: [bytes[index]])))), promise: nil)
                sent.value = index + 1
                store.countTrickled()
            }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body.clear()
            case .body(var piece):
                body.writeBuffer(&piece)
            case .end:
                guard let head else { return }
                let answer = store.record(head, body)
                var headers = HTTPHeaders(answer.headers)
                headers.replaceOrAdd(name: "content-length", value: String(answer.announcedLength ?? answer.body.readableBytes))
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: answer.status, headers: headers))), promise: nil)
                if let trickle = answer.trickle, head.method != .HEAD {
                    trickleBody(answer.body, every: trickle, context: context)
                    return
                }
                if head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil) }
                if let announced = answer.announcedLength, announced > answer.body.readableBytes {
                    let channel = context.channel
                    context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
                } else {
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                }
            }
        }
    }
}
