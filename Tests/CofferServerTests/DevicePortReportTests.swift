import CofferFormat
import Foundation
import Testing

@testable import CofferServer

/// `POST /v1/device/reports` on the device port (``DeviceHTTPHandler`` over ``ReportEndpoint``)
/// against the same request on the main port (Vapor's route): same status, error code and body
/// for every answer, over raw TCP; then what only the lean listener does (pipelining, the body
/// cap before buffering, the idle timeout).
@Suite("Device reports on the device port")
struct DevicePortReportTests {
    /// A server with a device port and an activated deployment, and a device's verified manifest.
    struct Setup {
        let server: TestServer
        let devicePort: Int
        let mainPort: Int
        let fleet: Fleet
        let deployment: String
        let manifest: Manifest

        static func start(_ adjust: (inout ServerConfiguration) -> Void = { _ in }) async throws -> Setup {
            let server = try await TestServer.start { configuration in
                RolloutTests.fast(&configuration)
                configuration.devicePort = 0
                adjust(&configuration)
            }
            try await server.app.asyncBoot()
            let devicePort = try #require(server.app.storage[DeviceListener.Key.self]?.port)
            let fleet = Fleet(try await Flowers.make(server), size: 1)
            let deployment = try await fleet.deployment("spring")
            #expect(try await fleet.flowers.activate(deployment).status == 200)
            let manifest = try #require(try await fleet.manifests()["device-0"])
            return Setup(server: server, devicePort: devicePort, mainPort: try #require(server.base.port), fleet: fleet,
                         deployment: deployment, manifest: manifest)
        }

        /// `count` events of one device (each with an ID of its own; the first a failure).
        func events(device: String, count: Int = 20, changes: [String: Any] = [:]) -> [[String: Any]] {
            (0..<count).map { index -> [String: Any] in
                var event = Fleet.event(manifest, device: device, model: index % 2 == 0 ? "FlowerClassifier" : "FlowerStylizer",
                                        outcome: index == 0 ? "failed" : "loaded", reason: index == 0 ? "oom" : nil)
                for (key, value) in changes { event[key] = value }
                return event
            }
        }

        /// ``events(device:count:changes:)`` as a body.
        func batch(device: String, count: Int = 20, changes: [String: Any] = [:]) throws -> [UInt8] {
            try Self.body(events(device: device, count: count, changes: changes))
        }

        static func body(_ events: [[String: Any]]) throws -> [UInt8] {
            Array(try JSONSerialization.data(withJSONObject: ["events": events]))
        }

        var authorization: String { DevicePortReportTests.basic(fleet.flowers.app) }
    }

    /// One HTTP/1.1 response read off the wire.
    struct Answer: CustomStringConvertible {
        let status: Int
        let headers: [String: String]
        let body: String

        var json: NSDictionary? { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? NSDictionary }

        var errorCode: String? { json?["error"] as? String }

        var description: String { "\(status) \(body.prefix(300))" }

        /// The responses in `text`, in order (bodies by Content-Length).
        static func all(in text: String) -> [Answer] {
            var answers: [Answer] = []
            var rest = Substring(text)
            while let end = rest.range(of: "\r\n\r\n") {
                let lines = rest[..<end.lowerBound].split(separator: "\r\n")
                guard let first = lines.first, first.hasPrefix("HTTP/1.1 "), let status = Int(first.dropFirst(9).prefix(3)) else { break }
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let length = Int(headers["content-length"] ?? "0") ?? 0
                let bodyStart = end.upperBound
                guard rest.utf8.distance(from: bodyStart, to: rest.endIndex) >= length else { break }
                let bodyEnd = rest.utf8.index(bodyStart, offsetBy: length)
                answers.append(Answer(status: status, headers: headers, body: String(rest[bodyStart..<bodyEnd])))
                rest = rest[bodyEnd...]
            }
            return answers
        }
    }

    static func basic(_ app: (id: String, credential: String)) -> String {
        "Basic " + Data("\(app.id):\(app.credential)".utf8).base64EncodedString()
    }

    /// A POST of `body` with Content-Length.
    static func post(_ body: [UInt8], authorization: String?) -> [UInt8] {
        var head = "POST /v1/device/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        if let authorization { head += "Authorization: \(authorization)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// The same POST in chunks of `chunk` bytes (Transfer-Encoding: chunked, no Content-Length).
    static func chunkedPost(_ body: [UInt8], authorization: String, chunk: Int = 8192) -> [UInt8] {
        var bytes = Array(("POST /v1/device/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           + "Authorization: \(authorization)\r\nTransfer-Encoding: chunked\r\n\r\n").utf8)
        var start = 0
        while start < body.count {
            let part = body[start..<min(body.count, start + chunk)]
            bytes += Array((String(part.count, radix: 16) + "\r\n").utf8) + part + Array("\r\n".utf8)
            start += chunk
        }
        return bytes + Array("0\r\n\r\n".utf8)
    }

    /// Sends `bytes` on a new connection to `port` and reads the one answer.
    static func exchange(_ bytes: [UInt8], port: Int) async throws -> Answer {
        let connection = try await RawConnection.connect(port: port)
        try await connection.send(bytes)
        let (text, _) = try await connection.wait { Answer.all(in: $0).count == 1 }
        await connection.close()
        return try #require(Answer.all(in: text).first, "no answer from port \(port): \(text.prefix(300))")
    }

    /// Sends `main` to the main port and `device` (default: the same bytes) to the device port;
    /// expects the same status, error code and body, and returns the device port's answer.
    @discardableResult
    static func same(_ setup: Setup, _ main: [UInt8], device: [UInt8]? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Answer {
        let vapor = try await exchange(main, port: setup.mainPort)
        let lean = try await exchange(device ?? main, port: setup.devicePort)
        #expect(lean.status == vapor.status, "main \(vapor) / device \(lean)", sourceLocation: sourceLocation)
        #expect(lean.errorCode == vapor.errorCode, "main \(vapor) / device \(lean)", sourceLocation: sourceLocation)
        // An error body's keys come in the encoder's order, which varies: compared as JSON.
        #expect(lean.json == vapor.json && lean.json != nil, "main \(vapor) / device \(lean)", sourceLocation: sourceLocation)
        if vapor.status == 200 { #expect(lean.body == vapor.body, sourceLocation: sourceLocation) }
        #expect(lean.headers["content-type"] == vapor.headers["content-type"], sourceLocation: sourceLocation)
        return lean
    }

    @Test("a valid batch, then its retry, get the main port's answers, and the counts reach the deployment's status")
    func accepted() async throws {
        let setup = try await Setup.start()
        defer { Task { try? await setup.server.stop() } }
        let deviceEvents = setup.events(device: "port-device")
        let onMain = try setup.batch(device: "main-device"), onDevice = try Setup.body(deviceEvents)
        let first = try await Self.same(setup, Self.post(onMain, authorization: setup.authorization),
                                        device: Self.post(onDevice, authorization: setup.authorization))
        #expect(first.status == 200 && first.body == #"{"accepted":20,"duplicates":0}"#, "\(first)")
        // Each retried on the other port: one buffer behind both.
        let retry = try await Self.same(setup, Self.post(onDevice, authorization: setup.authorization),
                                        device: Self.post(onMain, authorization: setup.authorization))
        #expect(retry.status == 200 && retry.body == #"{"accepted":0,"duplicates":20}"#, "\(retry)")
        // A batch mixing new and seen events (an answer not made in advance).
        let mixed = try Setup.body(Array(deviceEvents.prefix(5)) + setup.events(device: "port-device", count: 3))
        let answer = try await Self.exchange(Self.post(mixed, authorization: setup.authorization), port: setup.devicePort)
        #expect(answer.status == 200 && answer.body == #"{"accepted":3,"duplicates":5}"#, "\(answer)")

        let status = try await setup.fleet.waitForStatus(setup.deployment) { $0["devices"] as? Int == 2 }
        #expect(status["devices"] as? Int == 2, "\(status)")
        #expect((status["outcomes"] as? [String: Int])?["failed"] == 2, "\(status)")
    }

    @Test("bad JSON, an oversized body (by Content-Length and chunked) and a bad event get the main port's answers")
    func refusedBodies() async throws {
        let setup = try await Setup.start()
        defer { Task { try? await setup.server.stop() } }
        let auth = setup.authorization
        let notJSON = try await Self.same(setup, Self.post(Array(#"{"events": ["#.utf8), authorization: auth))
        #expect(notJSON.status == 400 && notJSON.errorCode == "invalid_request", "\(notJSON)")
        let badEvent = try await Self.same(setup, Self.post(try setup.batch(device: "d", count: 2, changes: ["sha256": "ABC"]), authorization: auth))
        #expect(badEvent.status == 400 && badEvent.body.contains("event 0: sha256"), "\(badEvent)")

        let big = try setup.batch(device: "d", count: 1, changes: ["reason": String(repeating: "r", count: 70_000)])
        let byLength = try await Self.same(setup, Self.post(big, authorization: auth))
        #expect(byLength.status == 413 && byLength.errorCode == "too_large", "\(byLength)")
        let chunked = try await Self.same(setup, Self.chunkedPost(big, authorization: auth))
        #expect(chunked.status == 413 && chunked.errorCode == "too_large", "\(chunked)")
        // One byte over the cap is refused, the cap itself is read (and refused for its shape only).
        let atCap = Array(String(repeating: " ", count: ReportEndpoint.maximumBody).utf8)
        #expect(try await Self.same(setup, Self.post(atCap, authorization: auth)).status == 400)
        #expect(try await Self.same(setup, Self.chunkedPost(atCap + [0x20], authorization: auth)).status == 413)

        // A form or plain-text body: the main port's 415 (its NonJSONBodies), on both.
        let valid = try setup.batch(device: "d", count: 1)
        for type in ["text/plain", "application/x-www-form-urlencoded"] {
            let post = Self.post(valid, authorization: auth).replacing(Array("application/json".utf8), with: Array(type.utf8))
            let refused = try await Self.same(setup, post)
            #expect(refused.status == 415, "\(type): \(refused)")
        }

        // The device port decides from Content-Length alone: no body byte is sent, the 413 comes at once.
        let connection = try await RawConnection.connect(port: setup.devicePort)
        try await connection.send("POST /v1/device/reports HTTP/1.1\r\nHost: x\r\nAuthorization: \(auth)\r\nContent-Length: 1000000000\r\n\r\n")
        let (text, closed) = try await connection.wait(seconds: 10) { _ in false }
        #expect(RawConnection.statuses(text) == [413], "\(text.prefix(300))")
        #expect(closed, "the rest of a refused body is not read")

        // A client that keeps sending after its 413 (each read would hold the idle timeout off) is
        // let go once the linger limit has passed.
        let sender = try await RawConnection.connect(port: setup.devicePort)
        try await sender.send("POST /v1/device/reports HTTP/1.1\r\nHost: x\r\nAuthorization: \(auth)\r\nContent-Length: 1000000000\r\n\r\n")
        var gone = false
        for _ in 0..<120 where !gone {
            do { try await sender.send(bytes: [UInt8](repeating: 0x20, count: 16)) } catch { gone = true }
            try await Task.sleep(for: .milliseconds(250))
            gone = try await sender.wait(seconds: 0) { _ in false }.closed || gone
        }
        #expect(gone, "still open 30 s after its 413")
        await sender.close()
    }

    @Test("a wrong credential, another team's app, an unbound app, an unknown deployment or model get the main port's answers")
    func refusedCallers() async throws {
        let setup = try await Setup.start()
        defer { Task { try? await setup.server.stop() } }
        let world = setup.fleet.flowers.world
        let batch = try setup.batch(device: "d", count: 2)

        let anonymous = try await Self.same(setup, Self.post(batch, authorization: nil))
        #expect(anonymous.status == 401 && anonymous.errorCode == "invalid_credential", "\(anonymous)")
        let wrong = try await Self.same(setup, Self.post(batch, authorization: Self.basic((setup.fleet.flowers.app.id, "cfa_wrong"))))
        #expect(wrong.status == 401 && wrong.errorCode == "invalid_credential", "\(wrong)")

        try await world.team("U")
        let outsider = try await world.app(in: "U")
        let other = try await Self.same(setup, Self.post(batch, authorization: Self.basic(outsider)))
        #expect(other.status == 403 && other.errorCode == "collection_not_bound", "\(other)")
        let unbound = try await world.app(in: "T", name: "Unbound")
        let notBound = try await Self.same(setup, Self.post(batch, authorization: Self.basic(unbound)))
        #expect(notBound.status == 403 && notBound.errorCode == "collection_not_bound", "\(notBound)")
        // The bound app naming a collection it is not bound to (the app itself cached).
        let otherCollection = try await Self.same(setup, Self.post(try setup.batch(device: "d", count: 1, changes: ["collection": "Other"]),
                                                                   authorization: setup.authorization))
        #expect(otherCollection.status == 403 && otherCollection.errorCode == "collection_not_bound", "\(otherCollection)")

        let unknown = try await Self.same(setup, Self.post(try setup.batch(device: "d", count: 1, changes: ["deployment": UUID().uuidString]),
                                                           authorization: setup.authorization))
        #expect(unknown.status == 422 && unknown.errorCode == "unknown_deployment", "\(unknown)")
        let model = try await Self.same(setup, Self.post(try setup.batch(device: "d", count: 1, changes: ["model": "Nope"]),
                                                         authorization: setup.authorization))
        #expect(model.status == 422 && model.errorCode == "unknown_model", "\(model)")

        // Nothing above counted.
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await setup.fleet.status(setup.deployment)["devices"] as? Int == 0)
    }

    @Test("a device over its budget gets 429 with Retry-After on both ports, from one budget")
    func rateLimited() async throws {
        let setup = try await Setup.start { $0.reportEventsPerDevicePerMinute = 30 }
        defer { Task { try? await setup.server.stop() } }
        let auth = setup.authorization
        for _ in 0..<3 {  // 30 events: the budget, used through the device port
            let answer = try await Self.exchange(Self.post(try setup.batch(device: "flood", count: 10), authorization: auth), port: setup.devicePort)
            #expect(answer.status == 200, "\(answer)")
        }
        let vapor = try await Self.exchange(Self.post(try setup.batch(device: "flood", count: 10), authorization: auth), port: setup.mainPort)
        let lean = try await Self.exchange(Self.post(try setup.batch(device: "flood", count: 10), authorization: auth), port: setup.devicePort)
        for answer in [vapor, lean] {
            #expect(answer.status == 429 && answer.errorCode == "rate_limited", "\(answer)")
            #expect(Int(answer.headers["retry-after"] ?? "") ?? 0 > 0, "\(answer.headers)")
        }
        // The same reason but for the seconds left, which may have ticked between the two (the
        // keys' order varies with the encoder: compared as JSON).
        let seconds = /\d+/
        #expect(lean.errorCode == vapor.errorCode, "main \(vapor) / device \(lean)")
        #expect((lean.json?["reason"] as? String)?.replacing(seconds, with: "N") == (vapor.json?["reason"] as? String)?.replacing(seconds, with: "N")
                && lean.json?.count == 2 && vapor.json?.count == 2, "main \(vapor) / device \(lean)")
    }

    @Test("pipelined reports on one connection are answered in order, the first after a database check")
    func pipelined() async throws {
        let setup = try await Setup.start()
        defer { Task { try? await setup.server.stop() } }
        let auth = setup.authorization
        let first = try setup.batch(device: "p1"), second = try setup.batch(device: "p2", count: 7)
        // No report has named the deployment yet: the first asks the database, the others wait.
        let connection = try await RawConnection.connect(port: setup.devicePort)
        try await connection.send(Self.post(first, authorization: auth) + Self.post(Array("{".utf8), authorization: auth)
                                  + Self.post(second, authorization: auth) + Self.post(first, authorization: auth))
        let (text, closed) = try await connection.wait { Answer.all(in: $0).count == 4 }
        let answers = Answer.all(in: text)
        #expect(answers.map(\.status) == [200, 400, 200, 200], "\(text.prefix(600))")
        #expect(answers.map(\.body).enumerated().filter { $0.offset != 1 }.map(\.element)
                == [#"{"accepted":20,"duplicates":0}"#, #"{"accepted":7,"duplicates":0}"#, #"{"accepted":0,"duplicates":20}"#], "\(text.prefix(600))")
        #expect(!closed, "HTTP/1.1 keeps the connection")
        await connection.close()
    }

    @Test("a report whose body stops half-way is closed by the idle timeout, unanswered")
    func slowBody() async throws {
        // The team, app and deployment are made through a server with the default idle timeout (a
        // 1 s one can close a set-up call that waits on a loaded machine); a second server on the
        // same data folder has the 1 s timeout under test.
        let setup = try await Setup.start()
        defer { Task { try? await setup.server.stop() } }
        let impatient = try await TestServer.start(dataDirectory: setup.server.dataDirectory) { configuration in
            RolloutTests.fast(&configuration)
            configuration.devicePort = 0
            configuration.idleTimeout = 1
        }
        defer { Task { try? await impatient.stop(removingData: false) } }
        try await impatient.app.asyncBoot()
        let port = try #require(impatient.app.storage[DeviceListener.Key.self]?.port)
        let body = try setup.batch(device: "slow")
        let half = Array(Self.post(body, authorization: setup.authorization).dropLast(body.count / 2))
        // On a loaded machine a second can pass between connecting and sending, and the idle timeout
        // closes the connection before the half body is out ("I/O on closed channel"): that attempt
        // shows nothing, so it is made again (three times at most).
        for attempt in 1...3 {
            let connection = try await RawConnection.connect(port: port)
            let started = Date()
            do {
                try await connection.send(half)
            } catch where attempt < 3 {
                await connection.close()
                continue
            }
            let (text, closed) = try await connection.wait(seconds: 15) { _ in false }
            #expect(closed, "the connection is closed")
            #expect(text.isEmpty, "\(text.prefix(300))")
            #expect(Date().timeIntervalSince(started) < 10)
            return
        }
    }
}

extension RawConnection {
    func send(_ bytes: [UInt8]) async throws {
        try await send(String(decoding: bytes, as: UTF8.self))
    }
}
