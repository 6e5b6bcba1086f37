import Prometheus
import Vapor

/// Prometheus metrics of one server instance, served at `/metrics`.
///
/// A registry per application (not the process-wide MetricsSystem), so several servers in one test
/// process keep their own counts.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    func request(method: String, status: UInt) {
        registry.makeCounter(name: "coffer_http_requests_total", labels: [("method", method), ("status", "\(status)")],
                             help: "HTTP requests by method and status").increment()
    }

    func keyDeliveries(outcome: String) {
        registry.makeCounter(name: "coffer_key_deliveries_total", labels: [("outcome", outcome)],
                             help: "Key delivery requests by outcome").increment()
    }

    /// Made once: the manifest endpoint is the hottest path and counts every answer.
    private let manifestCounters: (ok: Counter, notModified: Counter)

    init() {
        manifestCounters = (
            registry.makeCounter(name: "coffer_manifests_total", labels: [("status", "200")], help: "Manifests answered (200 with a body or 304)"),
            registry.makeCounter(name: "coffer_manifests_total", labels: [("status", "304")], help: "Manifests answered (200 with a body or 304)"))
    }

    func manifests(status: UInt) {
        (status == 304 ? manifestCounters.notModified : manifestCounters.ok).increment()
    }

    func bytesServed(_ count: Int) {
        registry.makeCounter(name: "coffer_blob_bytes_served_total", help: "Blob bytes sent to clients").increment(by: Int64(count))
    }

    func render() -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}

/// Counts every request by method and status (future-based: no hop to a task per request).
struct MetricsMiddleware: Middleware {
    let metrics: ServerMetrics

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        next.respond(to: request).map { response in
            metrics.request(method: request.method.rawValue, status: response.status.code)
            return response
        }
    }
}
