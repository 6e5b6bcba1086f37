import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import Vapor

/// A second, lean HTTP/1.1 listener for devices' manifest requests and reports (``ServerConfiguration/devicePort``).
///
/// Vapor's request path (request object, router, middleware, response encoding) costs more per
/// request than the manifest itself; this listener is SwiftNIO's HTTP/1.1 request decoder with one
/// handler (``DeviceHTTPHandler``) over the same ``ManifestEndpoint`` and ``ReportEndpoint`` as the
/// Vapor routes, so the two answer identically. It serves `GET /v1/device/collections/{id}/manifest`
/// and `POST /v1/device/reports`, and nothing else.
///
/// It stops as Vapor's listener does (``drain(timeout:)``, through swift-nio-extras'
/// `ServerQuiescingHelper`): no new connection is accepted, a request in flight is answered with
/// `connection: close`, and an idle keep-alive connection is closed.
final class DeviceListener: LifecycleHandler, @unchecked Sendable {
    private let channel: any Channel
    private let quiesce: ServerQuiescingHelper

    private init(channel: any Channel, quiesce: ServerQuiescingHelper) {
        self.channel = channel
        self.quiesce = quiesce
    }

    /// The port it listens on (useful when started on port 0).
    var port: Int? { channel.localAddress?.port }

    /// Binds the listener on the application's event loops; it stops with the application.
    /// A connection idle (nothing read, nothing written) for `idleTimeout` is closed; nil: never.
    /// Answers are timed into `metrics` (``ServerMetrics/deviceRequest(_:status:since:)``).
    static func start(_ app: Application, manifests: ManifestEndpoint, reports: ReportEndpoint, metrics: ServerMetrics,
                      hostname: String, port: Int, idleTimeout: TimeAmount?) async throws {
        let database = app.db, logger = app.logger, trustedProxies = app.trustedProxies
        let quiesce = ServerQuiescingHelper(group: app.eventLoopGroup)
        let channel = try await ServerBootstrap(group: app.eventLoopGroup)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiesce.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            // A client that closes its side after its last request still gets the answers: its
            // end of input is told to the handler, which closes once they are flushed (answers
            // wait for the end of the event loop's round, and NIO's own close at end of input
            // would fail them).
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // A client that does not read its answers is not read either.
                    try channel.pipeline.syncOperations.addHandler(ReadWhenWritable())
                    // A client that sends nothing, or stops half-way through a request, is let go.
                    if let idleTimeout {
                        try channel.pipeline.syncOperations.addHandler(IdleStateHandler(allTimeout: idleTimeout))
                        try channel.pipeline.syncOperations.addHandler(CloseWhenIdle())
                    }
                    // NIO's request decoder and one handler that writes whole responses as bytes
                    // (no response encoder, no pipelining handler: the handler keeps the order).
                    // Bytes the parser cannot use yet (a head being received) stay under
                    // `unparsedLimit`: past it (a client sending behind a request to switch
                    // protocols, after which NIO's parser keeps everything) the connection closes.
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(
                        HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .drop,
                                           limitConfiguration: DeviceListener.headLimits),
                        maximumBufferSize: DeviceListener.unparsedLimit))
                    try channel.pipeline.syncOperations.addHandler(DeviceHTTPHandler(endpoint: manifests, reports: reports, metrics: metrics,
                                                                                  trustedProxies: trustedProxies, database: database, logger: logger))
                }
            }
            .bind(host: hostname, port: port).get()
        let listener = DeviceListener(channel: channel, quiesce: quiesce)
        app.storage[Key.self] = listener
        app.lifecycle.use(listener)
        app.logger.debug("device listener on \(hostname):\(listener.port ?? port) (manifests and reports)")
    }

    /// A device request's head: a manifest's query (at most 8 KiB) and a few headers. NIO's
    /// defaults (80 KiB, 65 534 fields) let one head cost megabytes once parsed, and up to
    /// ``DeviceHTTPHandler/maximumWaiting`` heads are kept per connection.
    static let headLimits: NIOHTTPDecoderLimitConfiguration = {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = 16 * 1024
        limits.maxHeaderListSize = 32 * 1024
        limits.maxHeaderFieldCount = 100
        return limits
    }()

    /// The most bytes kept unparsed per connection.
    static let unparsedLimit = 256 * 1024

    /// Stops accepting, lets every request in flight be answered (then its connection closes) and
    /// closes idle connections at once; returns when all are closed, or after `timeout` (a client
    /// that stopped half-way through a request is left to the idle timeout). Again: waits the same.
    func drain(timeout: TimeAmount = .seconds(10)) async {
        let eventLoop = channel.eventLoop
        let done = eventLoop.makePromise(of: Void.self)
        let drained = eventLoop.makePromise(of: Void.self)
        quiesce.initiateShutdown(promise: drained)
        let deadline = eventLoop.scheduleTask(in: timeout) { done.succeed(()) }
        drained.futureResult.whenComplete { _ in
            deadline.cancel()
            done.succeed(())
        }
        try? await done.futureResult.get()
    }

    func shutdown(_ app: Application) {
        try? channel.close().wait()
    }

    func shutdownAsync(_ app: Application) async {
        await drain()
    }

    struct Key: StorageKey { typealias Value = DeviceListener }
}
