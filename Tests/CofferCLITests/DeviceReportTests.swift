import Coffer
import CofferFormat
import Foundation
import Testing

/// The SDK's device reports against a real server: what it reports by itself, what the app
/// reports, what the server counts, and the on-disk queue across a restart.
@Suite("Coffer SDK device reports against a real server")
struct DeviceReportTests {
    /// An app error whose description carries what must never leave the device.
    struct ModelLoadError: Error, CustomStringConvertible {
        var description: String { "out of memory loading /home/alice/Models/flowers.bin with token cft_0123456789abcdef0123456789abcdef" }
    }

    @Test("downloaded and opened are reported by themselves, loaded and failed when the app says; the server counts devices and outcomes")
    func reportsAreCounted() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")

        // Device 1 downloads both models, opens the classifier twice (one `opened`) and says it loaded.
        let cache1 = fleet.folder("device-1")
        let client1 = try CofferClient(configuration: fleet.configuration(cache1))
        let collection1 = try await client1.beginAccessing(identifier: "FlowerModels")
        let classifier = try #require(collection1.entries["FlowerClassifier"])
        #expect(try await classifier.data() == fleet.plain["classifier"])
        #expect(try await classifier.data() == fleet.plain["classifier"])
        await classifier.report(.loaded)
        try await client1.sendReports()
        #expect(SDKFleet.queuedReports(cache1).isEmpty)

        // Device 2 says the stylizer failed, fire and forget; the background send delivers it.
        var configuration2 = try fleet.configuration(fleet.folder("device-2"))
        configuration2.deviceID = "device-2"
        let client2 = try CofferClient(configuration: configuration2)
        let collection2 = try await client2.beginAccessing(identifier: "FlowerModels")
        collection2.entries["FlowerStylizer"]?.reportFailure(ModelLoadError())

        let expected = ["downloaded": 2, "opened": 1, "loaded": 1, "failed": 1]
        let status = try await fleet.status("spring") { SDKFleet.outcomes($0) == expected }
        #expect(status["devices"] as? Int == 2, "\(status)")
        #expect(SDKFleet.outcomes(status) == expected, "\(status)")
        let models = (status["models"] as? [[String: Any]] ?? []).reduce(into: [String: Int]()) {
            $0[$1["model"] as? String ?? ""] = $1["failed"] as? Int
        }
        #expect(models == ["FlowerClassifier": 0, "FlowerStylizer": 1], "\(status)")
        // The reason: the error's type and description, without the path or the token.
        let reasons = (status["topReasons"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
        #expect(reasons == ["ModelLoadError: out of memory loading <path> with token <redacted>"], "\(reasons)")
        // Once the background send is over (an explicit send waits for it), the queue is empty.
        try await client2.sendReports()
        #expect(SDKFleet.queuedReports(fleet.folder("device-2")).isEmpty)
    }

    @Test("reports queued while the server is unreachable survive a restart: the next client on the cache sends them by itself")
    func queueSurvivesRestart() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder("restarting")
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        proxy.setRule { _, _, _, _, _ in .forward }

        // The first run: downloads through the proxy, then the proxy goes away (no network).
        do {
            let client = try CofferClient(configuration: fleet.configuration(cache, server: proxy.url))
            let collection = try await client.beginAccessing(identifier: "FlowerModels")
            // The `downloaded` reports may or may not have left before the network went.
            _ = try? await client.sendReports()
            proxy.stop()
            let stylizer = try #require(collection.entries["FlowerStylizer"])
            await stylizer.report(.loaded)
            await #expect(throws: ReportError.self) { try await client.sendReports() }
            let classifier = try #require(collection.entries["FlowerClassifier"])
            do {
                try await client.report(.loaded, for: classifier)
                Issue.record("a report reached a server that is gone")
            } catch {
                guard case .queued(.offline) = error else { Issue.record("\(error)"); return }
            }
        }
        let queued = SDKFleet.queuedReports(cache)
        #expect(queued.map { $0["outcome"] as? String } == ["loaded", "loaded"], "\(queued)")
        let permissions = try FileManager.default.attributesOfItem(atPath: cache.path + "/reports/queue.json")[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: cache.path + "/reports")[.posixPermissions] as? Int == 0o700)
        #expect(!String(decoding: FileManager.default.contents(atPath: cache.path + "/reports/queue.json") ?? Data(), as: UTF8.self)
            .contains(fleet.flowers.credential))

        // The next launch, against the real server: it sends what the first queued by itself, in
        // the background (a cached-only client would make no request by itself).
        let restarted = try CofferClient(configuration: fleet.configuration(cache, policy: .useCachedAndUpdateInBackground))
        let status = try await fleet.status("spring") { SDKFleet.outcomes($0)["loaded"] == 1 }
        #expect(SDKFleet.outcomes(status)["loaded"] == 1, "\(status)")
        try await restarted.sendReports()
        #expect(SDKFleet.queuedReports(cache).isEmpty)
        #expect(status["devices"] as? Int == 1)
        let models = (status["models"] as? [[String: Any]] ?? []).compactMap { $0["model"] as? String }.sorted()
        #expect(models == ["FlowerClassifier", "FlowerStylizer"], "\(status)")
    }

    @Test("503 keeps a batch queued, 422 drops it, and a refusal naming one event drops only that one; the rest is counted")
    func refusalsAndRetries() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let cache = fleet.folder("refusals")
        // Retry-After keeps this client's background sends an hour off: with the 30 s backoff a
        // plain 503 sets, a loaded machine could reach the wake before the explicit sends below,
        // and the background send would take their events.
        let (proxy, answer, client, stylizer) = try await Self.proxiedReports(fleet, cache: cache, answering: .status(503, retryAfter: "3600"))
        defer { proxy.stop() }
        await stylizer.report(.loaded)
        do {
            try await client.sendReports()
            Issue.record("503 was taken for an answer")
        } catch {
            guard case .queued(.server(503, _, _)) = error else { Issue.record("\(error)"); return }
        }
        #expect(SDKFleet.queuedReports(cache).contains { $0["outcome"] as? String == "loaded" })

        answer.set(.status(422))
        #expect(try await client.sendReports() == 0)
        #expect(SDKFleet.queuedReports(cache).isEmpty)

        // A device ID with a control character: the server refuses that event by its index (400);
        // the SDK drops it and sends the other at once. (The client that queues it cannot reach a
        // server, and the 503 put the other client's background sends an hour off: both events
        // wait for the send below.)
        answer.set(.forward)
        var bad = try fleet.configuration(cache, server: "http://127.0.0.1:9", policy: .cachedOnly)
        bad.deviceID = "bad\u{1}device"
        let badClient = try CofferClient(configuration: bad)
        let badEntry = try #require(try badClient.cachedCollection(identifier: "FlowerModels")?.entries["FlowerStylizer"])
        await badEntry.report(.failed(reason: "never counted"))
        await stylizer.report(.failed(reason: "counted"))
        #expect(SDKFleet.queuedReports(cache).map { $0["reason"] as? String } == ["never counted", "counted"])
        #expect(try await client.sendReports() == 1)
        #expect(SDKFleet.queuedReports(cache).isEmpty)
        let status = try await fleet.status("spring") { SDKFleet.outcomes($0)["failed"] == 1 }
        let reasons = (status["topReasons"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
        #expect(reasons == ["counted"], "\(status)")
    }

    @Test("a Retry-After that is not a number of seconds (nan, a date) is ignored: the app lives and the batch stays queued")
    func hostileRetryAfter() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let cache = fleet.folder("hostile-retry-after")
        let (proxy, answer, client, stylizer) = try await Self.proxiedReports(fleet, cache: cache, answering: .status(503, retryAfter: "nan"))
        defer { proxy.stop() }
        await stylizer.report(.loaded)

        // `Double("nan")` is NaN, which a clamp with min and max passes through: the background
        // send the events started (after `Reporter.gathering`, 5 s) got the 503 and scheduled its
        // next try after NaN seconds, a `UInt64` made from NaN, which ended the app — and with the
        // batch still queued on disk, again at every launch.
        try await Task.sleep(nanoseconds: 7_000_000_000)
        for hostile in ["-nan", "inf", "1e300", "0x1p70", "Fri, 27 Nov 2026 10:00:00 GMT"] {
            answer.set(.status(503, retryAfter: hostile))
            do {
                try await client.sendReports()
                Issue.record("503 was taken for an answer")
            } catch {
                guard case .queued(.server(503, _, _)) = error else { Issue.record("\(error)"); return }
            }
        }
        let queued = SDKFleet.queuedReports(cache)
        #expect(queued.contains { $0["outcome"] as? String == "loaded" })
        answer.set(.forward)
        #expect(try await client.sendReports() == queued.count)
        #expect(SDKFleet.queuedReports(cache).isEmpty)
        let sends = proxy.takeLog().filter { $0.path.hasPrefix("/v1/device/reports") }.count
        #expect(sends >= 7, "the background send reached the proxy: \(sends) sends")
    }

    /// The "spring" deployment, and a client on `cache` whose report requests go through a proxy
    /// answering `answer`'s action (first `first`; manifests and blobs are forwarded), with its
    /// collection begun; the caller stops the proxy.
    static func proxiedReports(_ fleet: SDKFleet, cache: URL, answering first: TamperingProxy.Action) async throws
        -> (proxy: TamperingProxy, answer: Answer, client: CofferClient, stylizer: ModelCollection.Entry) {
        try await fleet.deploy("spring", classifier: "classifier")
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        let answer = Answer()
        answer.set(first)
        proxy.setRule { _, path, _, _, _ in path.hasPrefix("/v1/device/reports") ? answer.action : .forward }
        do {
            let client = try CofferClient(configuration: fleet.configuration(cache, server: proxy.url))
            let collection = try await client.beginAccessing(identifier: "FlowerModels")
            return (proxy, answer, client, try #require(collection.entries["FlowerStylizer"]))
        } catch {
            proxy.stop()
            throw error
        }
    }

    /// What the proxy answers to report requests, changed by the test as it goes.
    final class Answer: @unchecked Sendable {
        private let lock = NSLock()
        private var current = TamperingProxy.Action.forward
        var action: TamperingProxy.Action { lock.withLock { current } }
        func set(_ action: TamperingProxy.Action) { lock.withLock { current = action } }
    }
}
