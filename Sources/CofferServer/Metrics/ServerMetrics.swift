import NIOConcurrencyHelpers
import NIOCore
import Prometheus
import Vapor

/// Prometheus metrics of one server instance, served at `/metrics`.
///
/// Coffer's own counters and the device port's durations are kept in a registry per application,
/// so several servers in one test process keep their own counts. `/metrics` adds the process-wide
/// registry that swift-metrics writes into once ``ProcessMetrics/bootstrap()`` has run: Vapor's
/// request counts and durations per route (`http_requests_total`,
/// `http_request_duration_seconds`), in the same exposition.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    func request(method: String, status: UInt) {
        registry.makeCounter(descriptor: Self.counter("http_requests", help: "HTTP requests by method and status"),
                             labels: [("method", method), ("status", "\(status)")]).increment()
    }

    /// Counts accepted device reports by outcome.
    func reports(outcome: ReportOutcome, count: Int) {
        reportCounters[outcome]?.increment(by: Int64(count))
    }

    /// Counts a staged rollout halted, by its health gate (`gate`) or by a person (`person`).
    func rolloutHalt(by: String) {
        registry.makeCounter(descriptor: Self.counter("rollout_halts", help: "Staged rollouts halted, by the health gate or a person"),
                             labels: [("by", by)]).increment()
    }

    /// Counts checked attestation evidence by format (`apple-app-attest`, `android-key-attestation`)
    /// and outcome (`attested`, `asserted`, or the refusal's reason code).
    func attestations(format: String, outcome: String) {
        registry.makeCounter(descriptor: Self.counter("attestations", help: "Attestation evidence checked with key requests, by format and outcome"),
                             labels: [("format", format), ("outcome", outcome)]).increment()
    }

    func keyDeliveries(outcome: String) {
        registry.makeCounter(descriptor: Self.counter("key_deliveries", help: "Key delivery requests by outcome"),
                             labels: [("outcome", outcome)]).increment()
    }

    /// Made once: the manifest endpoint is the hottest path and counts every answer.
    private let manifestCounters: (ok: Counter, notModified: Counter)
    /// Made once, as the report route counts every batch.
    private let reportCounters: [ReportOutcome: Counter]

    init() {
        let reports = Self.counter("device_reports", help: "Device report events accepted, by outcome")
        var counters: [ReportOutcome: Counter] = [:]
        for outcome in ReportOutcome.allCases { counters[outcome] = registry.makeCounter(descriptor: reports, labels: [("outcome", outcome.rawValue)]) }
        reportCounters = counters
        let manifests = Self.counter("manifests", help: "Manifests answered (200 with a body or 304)")
        manifestCounters = (
            registry.makeCounter(descriptor: manifests, labels: [("status", "200")]),
            registry.makeCounter(descriptor: manifests, labels: [("status", "304")]))
    }

    func manifests(status: UInt) {
        (status == 304 ? manifestCounters.notModified : manifestCounters.ok).increment()
    }

    /// The last measured difference between the database's clock and this process's
    /// (`coffer_clock_skew_seconds`, PostgreSQL only; see ``ClockSkew``).
    func clockSkew(_ seconds: Double) {
        registry.makeGauge(descriptor: MetricNameDescriptor(
            namespace: "coffer", metricName: "clock_skew", unitName: "seconds",
            helpText: "The database's clock minus this server's, last measured (PostgreSQL)")).set(seconds)
    }

    func bytesServed(_ count: Int) {
        registry.makeCounter(descriptor: Self.counter("blob_bytes_served", help: "Blob bytes sent to clients")).increment(by: Int64(count))
    }

    /// `coffer_NAME_total`, with its help line.
    private static func counter(_ name: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "coffer", metricName: name, unitName: "total", helpText: help)
    }

    /// The device port's routes, as Vapor labels its own (route patterns, never raw paths: an
    /// address a client makes up must not make a new series).
    enum DeviceRoute: Sendable {
        case manifest, reports, unknown

        var labels: (method: String, path: String) {
            switch self {
            case .manifest: return ("GET", "/v1/device/collections/:collection/manifest")
            case .reports: return ("POST", "/v1/device/reports")
            // Vapor's words for a request no route matched.
            case .unknown: return ("undefined", "vapor_route_undefined")
            }
        }
    }

    /// Durations on the device port, by route and status (`coffer_device_request_duration_seconds`).
    private let deviceDurations = NIOLockedValueBox<[DurationKey: DurationHistogram]>([:])
    private struct DurationKey: Hashable {
        let route: DeviceRoute
        let status: UInt
    }

    /// Times one answer of the device port, from `since` (its request taken up) to now.
    func deviceRequest(_ route: DeviceRoute, status: UInt, since: NIODeadline) {
        let key = DurationKey(route: route, status: status)
        let histogram = deviceDurations.withLockedValue { made in
            if let histogram = made[key] { return histogram }
            let labels = route.labels
            let histogram = registry.makeDurationHistogram(
                descriptor: MetricNameDescriptor(namespace: "coffer", metricName: "device_request_duration", unitName: "seconds",
                                                 helpText: "Answers on the device port, by route and status, from the request taken up to the answer written"),
                labels: [("method", labels.method), ("path", labels.path), ("status", "\(status)")],
                buckets: ProcessMetrics.durationBuckets)
            made[key] = histogram
            return histogram
        }
        histogram.recordNanoseconds((NIODeadline.now() - since).nanoseconds)
    }

    /// This instance's metrics, then the process-wide ones (Vapor's per-route requests).
    func render() -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        if ProcessMetrics.isBootstrapped { ProcessMetrics.registry.emit(into: &buffer) }
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
