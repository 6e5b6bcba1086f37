// The floor of bench/reports.sh: a bare SwiftNIO HTTP/1.1 server with the device listener's
// pipeline (NIO's HTTP decoder, then one handler) that gathers each POST's body, reads every byte
// of it once, and answers with the bytes nginx answers. No routing, no parsing, no checks, no
// buffer, no database: what a report costs here is what SwiftNIO and the kernel cost, so the
// difference to `coffer-server`'s device port is the route's own work.
//
//   swift build -c release --package-path bench/experiments/nio-floor
//   bench/experiments/nio-floor/.build/release/floor PORT
//
// bench/reports.sh loads it beside nginx when COFFER_BENCH_NIO_FLOOR_BIN names the binary.
import NIOCore
import NIOHTTP1
import NIOPosix

final class Floor: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    static let answer: ByteBuffer = {
        let body = #"{"accepted":20,"duplicates":0}"#
        return ByteBuffer(string: "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: \(body.utf8.count)\r\n\r\n" + body)
    }()

    private var body: ByteBuffer?
    /// Every body's bytes summed: kept, so the loop reading them is not optimized away.
    private(set) var checksum: UInt8 = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            body = context.channel.allocator.buffer(capacity: 8192)
        case .body(var part):
            body?.writeBuffer(&part)
        case .end:
            // Every byte read once, as a parser would (summed in a local: a stored property written
            // per byte costs an exclusivity check per byte, which halved the rate).
            if let body {
                var sum: UInt8 = 0
                for byte in body.readableBytesView { sum &+= byte }
                checksum &+= sum
            }
            body = nil
            context.writeAndFlush(wrapOutboundOut(Self.answer), promise: nil)
        }
    }
}

guard CommandLine.arguments.count == 2, let port = Int(CommandLine.arguments[1]) else {
    fatalError("usage: floor PORT")
}
let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
let channel = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 256)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
            try channel.pipeline.syncOperations.addHandler(Floor())
        }
    }
    .bind(host: "127.0.0.1", port: port).wait()
try channel.closeFuture.wait()
