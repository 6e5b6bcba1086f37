import NIOCore
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
final class DeviceListener: LifecycleHandler, @unchecked Sendable {
    private let channel: any Channel

    private init(channel: any Channel) { self.channel = channel }

    /// The port it listens on (useful when started on port 0).
    var port: Int? { channel.localAddress?.port }

    /// Binds the listener on the application's event loops; it stops with the application.
    /// A connection idle (nothing read, nothing written) for `idleTimeout` is closed; nil: never.
    static func start(_ app: Application, manifests: ManifestEndpoint, reports: ReportEndpoint, hostname: String, port: Int,
                      idleTimeout: TimeAmount?) async throws {
        let database = app.db, logger = app.logger, trustedProxies = app.trustedProxies
        let channel = try await ServerBootstrap(group: app.eventLoopGroup)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // A client that sends nothing, or stops half-way through a request, is let go.
                    if let idleTimeout {
                        try channel.pipeline.syncOperations.addHandler(IdleStateHandler(allTimeout: idleTimeout))
                        try channel.pipeline.syncOperations.addHandler(CloseWhenIdle())
                    }
                    // NIO's request decoder and one handler that writes whole responses as bytes
                    // (no response encoder, no pipelining handler: the handler keeps the order).
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                    try channel.pipeline.syncOperations.addHandler(DeviceHTTPHandler(endpoint: manifests, reports: reports, trustedProxies: trustedProxies,
                                                                                  database: database, logger: logger))
                }
            }
            .bind(host: hostname, port: port).get()
        let listener = DeviceListener(channel: channel)
        app.storage[Key.self] = listener
        app.lifecycle.use(listener)
        app.logger.notice("device listener on \(hostname):\(listener.port ?? port) (manifests and reports)")
    }

    func shutdown(_ app: Application) {
        try? channel.close().wait()
    }

    func shutdownAsync(_ app: Application) async {
        try? await channel.close()
    }

    struct Key: StorageKey { typealias Value = DeviceListener }
}
