import Foundation
import Testing

@testable import CofferServer

/// What an operator meets: `/` leads to the dashboard, `/metrics` has per-route duration
/// histograms (route patterns, never the paths clients make up), and stopping drains both ports.
@Suite("Operator experience")
struct OperatorTests {
    @Test("a text log line stays one line whatever its message and metadata hold")
    func textLogLinesStayOneLine() {
        let line = LineLogHandler.textLine(time: "2026-11-24T16:40:00.000Z", level: .warning,
                                           message: "refused\n2026-11-24T16:40:01.000Z critical forged",
                                           metadata: ["name": "a\r\nb", "path": "x\u{2028}y\u{85}z"])
        #expect(line.filter(\.isNewline).count == 1 && line.hasSuffix("\n"), "\(line)")
        #expect(line.contains("refused\\n2026") && line.contains("name=a\\r\\nb"), "\(line)")
        #expect(LineLogHandler.oneLine("plain text\twith a tab") == "plain text\twith a tab")
    }

    @Test("/ answers 303 to /dashboard/, which is the dashboard (not the API's JSON 404)")
    func rootRedirects() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let connection = try await RawConnection.connect(port: try #require(server.base.port))
        defer { Task { await connection.close() } }
        try await connection.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let (text, _) = try await connection.wait { $0.contains("\r\n\r\n") }
        #expect(RawConnection.statuses(text) == [303], "\(text.prefix(300))")
        #expect(text.lowercased().contains("\r\nlocation: /dashboard/\r\n"), "\(text.prefix(300))")
        let dashboard = try await HTTP(base: server.base).call("GET", "/dashboard/")
        #expect(dashboard.status == 200)
        #expect(dashboard.header("Content-Type")?.hasPrefix("text/html") == true)
    }

    /// The value of the series `name{labels}` in `/metrics`, or nil when it is absent.
    static func value(_ metrics: String, _ name: String, _ labels: String) -> Double? {
        let prefix = name + "{" + labels + "}"
        for line in metrics.split(separator: "\n") where line.hasPrefix(prefix + " ") {
            return Double(line.dropFirst(prefix.count + 1))
        }
        return nil
    }

    @Test("Vapor's request durations are histograms per route pattern, in /metrics beside Coffer's counters")
    func histograms() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let http = HTTP(base: server.base, token: server.adminToken)
        // The process-wide registry is shared by the servers of this test process: counts only grow.
        let labels = "method=\"GET\",path=\"/v1/teams/:team/collections\",status=\"404\""
        let before = Self.value(try await http.call("GET", "/metrics").fullText, "http_request_duration_seconds_count", labels) ?? 0
        for _ in 0..<3 { #expect(try await http.call("GET", "/v1/teams/nothing-\(UUID().uuidString)/collections").status == 404) }
        let metrics = try await http.call("GET", "/metrics").fullText
        let after = try #require(Self.value(metrics, "http_request_duration_seconds_count", labels), "\(metrics.prefix(2000))")
        #expect(after - before >= 3)
        #expect(Self.value(metrics, "http_request_duration_seconds_bucket", labels + ",le=\"+Inf\"") ?? 0 >= 3)
        #expect(Self.value(metrics, "http_request_duration_seconds_bucket", labels + ",le=\"10.0\"") != nil, "the buckets run to 10 s")
        #expect(metrics.contains("# TYPE http_request_duration_seconds histogram"))
        #expect(Self.value(metrics, "http_requests_total", labels) ?? 0 >= 3)
        // Coffer's own counters are still there, per server.
        #expect(metrics.contains("coffer_http_requests_total{method=\"GET\",status=\"404\"} 3"))
        #expect(!metrics.contains("nothing-"), "a raw path became a label")
    }

    @Test("addresses a client makes up never become series: unmatched requests share one label")
    func cardinality() async throws {
        let server = try await TestServer.start { $0.devicePort = 0 }
        defer { Task { try? await server.stop() } }
        let http = HTTP(base: server.base)
        let device = HTTP(base: URL(string: "http://127.0.0.1:\(try #require(server.app.storage[DeviceListener.Key.self]?.port))")!)
        let made = (0..<5).map { _ in "made-up-" + UUID().uuidString }
        for path in made {
            #expect(try await http.call("GET", "/" + path).status == 404)
            #expect(try await http.call("DELETE", "/v1/" + path).status == 404)
            #expect(try await device.call("GET", "/" + path).status == 404)
        }
        let metrics = try await http.call("GET", "/metrics").fullText
        #expect(!metrics.contains("made-up-"), "a made-up path is a label in /metrics")
        #expect(metrics.contains("http_request_duration_seconds_bucket{method=\"undefined\",path=\"vapor_route_undefined\",status=\"404\""))
        #expect(Self.value(metrics, "coffer_device_request_duration_seconds_count",
                           "method=\"undefined\",path=\"vapor_route_undefined\",status=\"404\"") == 5)
    }

    @Test("the device port times its answers by route pattern and status")
    func deviceHistograms() async throws {
        let (server, port, request) = try await DeviceListenerTests.start()
        defer { Task { try? await server.stop() } }
        let connection = try await RawConnection.connect(port: port)
        defer { Task { await connection.close() } }
        try await connection.send(request(DeviceListenerTests.manifest + "a", "HTTP/1.1") + request(DeviceListenerTests.manifest + "b", "HTTP/1.1")
                                  + request("/v1/device/collections/Unknown-\(UUID().uuidString)/manifest?deviceID=a", "HTTP/1.1"))
        let (text, _) = try await connection.wait { RawConnection.statuses($0).count == 3 }
        #expect(RawConnection.statuses(text) == [200, 200, 403], "\(text.prefix(300))")
        let metrics = try await HTTP(base: server.base).call("GET", "/metrics").fullText
        let manifest = "method=\"GET\",path=\"/v1/device/collections/:collection/manifest\""
        #expect(Self.value(metrics, "coffer_device_request_duration_seconds_count", manifest + ",status=\"200\"") == 2, "\(metrics.prefix(3000))")
        #expect(Self.value(metrics, "coffer_device_request_duration_seconds_count", manifest + ",status=\"403\"") == 1)
        #expect(Self.value(metrics, "coffer_device_request_duration_seconds_bucket", manifest + ",status=\"200\",le=\"+Inf\"") == 2)
        #expect(!metrics.contains("Unknown-"))
    }

    @Test("stopping drains both ports: a request in flight gets its answer, idle keep-alive connections close, no new connection is taken")
    func drain() async throws {
        let (server, devicePort, request) = try await DeviceListenerTests.start()
        defer { Task { try? await server.stop() } }
        let mainPort = try #require(server.base.port)
        // Idle keep-alive connections: one answered request each, then nothing.
        let idleDevice = try await RawConnection.connect(port: devicePort)
        try await idleDevice.send(request(DeviceListenerTests.manifest + "idle", "HTTP/1.1"))
        let idleMain = try await RawConnection.connect(port: mainPort)
        try await idleMain.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        for connection in [idleDevice, idleMain] {
            let (text, closed) = try await connection.wait { RawConnection.statuses($0).count == 1 }
            #expect(RawConnection.statuses(text) == [200] && !closed, "\(text.prefix(200))")
        }
        // Requests in flight: the head and half the body sent, the rest after the drain began.
        let body = #"{"events":[]}"#
        let head = "POST /v1/device/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        let busyDevice = try await RawConnection.connect(port: devicePort)
        let busyMain = try await RawConnection.connect(port: mainPort)
        for connection in [busyDevice, busyMain] { try await connection.send(head + body.prefix(5)) }
        try await Task.sleep(for: .milliseconds(300))  // both heads read

        let started = Date()
        let drained = Task { await server.app.drainListeners() }
        // Idle connections close at once; the busy ones stay open for their answer.
        for connection in [idleDevice, idleMain] {
            let (_, closed) = try await connection.wait(seconds: 8) { _ in false }
            #expect(closed, "an idle keep-alive connection is still open after the drain began")
        }
        // No new connection is taken on either port.
        for port in [devicePort, mainPort] {
            let refused: Bool
            do {
                let late = try await RawConnection.connect(port: port)
                try? await late.send(request(DeviceListenerTests.manifest + "late", "HTTP/1.1"))
                refused = try await late.wait(seconds: 5) { _ in false }.closed
                #expect(RawConnection.statuses(String(decoding: late.receivedBytes, as: UTF8.self)).isEmpty,
                        "a connection made after the drain began was answered")
            } catch {
                refused = true
            }
            #expect(refused)
        }
        for connection in [busyDevice, busyMain] { try await connection.send(String(body.dropFirst(5))) }
        for (name, connection) in [("device", busyDevice), ("main", busyMain)] {
            let (text, closed) = try await connection.wait(seconds: 10) { _ in false }
            // No credentials: the API's 401, which is an answer (the route ran).
            #expect(RawConnection.statuses(text) == [401], "\(name) port: \(text.prefix(300))")
            #expect(text.lowercased().contains("connection: close"), "\(name) port: \(text.prefix(300))")
            #expect(closed, "\(name) port: the connection stays open after its answer")
        }
        await drained.value
        #expect(Date().timeIntervalSince(started) < 9, "the drain waited for its timeout: a connection was left open")
    }
}

extension HTTP.Reply {
    /// The whole body as text (``text`` is its first 500 bytes).
    var fullText: String { String(decoding: body, as: UTF8.self) }
}
