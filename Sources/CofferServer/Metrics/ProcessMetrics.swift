import Metrics
import NIOConcurrencyHelpers
import Prometheus

/// The process's swift-metrics backend: swift-prometheus' factory over one registry, which every
/// server's `/metrics` shows after its own (``ServerMetrics/render()``).
///
/// Vapor records each request through swift-metrics (`http_requests_total`,
/// `http_request_errors_total` and the `http_request_duration_seconds` histogram, labelled with
/// the method, the route's pattern such as `/v1/teams/:team` — `vapor_route_undefined` when none
/// matched — and the status). swift-metrics has one backend per process, bootstrapped once:
/// `coffer-server serve` does it at start; the tests, which run many servers in one process, do it
/// once for all.
public enum ProcessMetrics {
    /// The registry behind the factory.
    static let registry = PrometheusCollectorRegistry()
    private static let bootstrapped = NIOLockedValueBox(false)

    /// Histogram buckets for request durations: 0.5 ms to 10 s (the device port answers from
    /// memory in well under a millisecond).
    static let durationBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
        .seconds(5), .seconds(10),
    ]

    /// Whether ``bootstrap()`` ran in this process.
    static var isBootstrapped: Bool { bootstrapped.withLockedValue { $0 } }

    /// Makes swift-prometheus the process's metrics backend, over ``registry``. The first call
    /// bootstraps swift-metrics; later calls do nothing (it may be bootstrapped only once).
    public static func bootstrap() {
        let first = bootstrapped.withLockedValue { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = durationBuckets
        MetricsSystem.bootstrap(factory)
    }
}
