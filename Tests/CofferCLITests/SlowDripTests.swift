import Coffer
import Foundation
import Testing

/// A server or CDN that trickles its answers — the head at once, then one byte every half second,
/// never finishing — so that a transport's idle timeout never fires (``Drip``). Small requests
/// used to go on for as long as the transport let a request live (a day, a week), and an update
/// held the collection's lock all that time: the fallback to the last known good, `endAccessing`
/// and `coffer report --failed` waited behind it. Now a small request ends at its deadline, and
/// an update holds the collection's lock only for its steps on the disk.
@Suite("A server that trickles its answers")
struct SlowDripTests {
    @Test("a manifest that trickles in is given up at the request deadline: the cache is served, the cause one line without URL or credential",
          arguments: SDKFleet.Transport.allCases)
    func manifestGivesUpAtItsDeadline(transport: SDKFleet.Transport) async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        let drip = Drip(every: 0.5)
        defer { drip.release() }
        var configuration = try fleet.configuration(fleet.folder("trickled-manifest"), server: proxy.url, transport: transport)
        configuration.requestDeadline = 2
        let client = try CofferClient(configuration: configuration)
        let synced = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(synced.origin == .server && synced.sequence == 1)

        // From now on the manifest is asked for whole (no If-None-Match, so no 304 without a body)
        // and trickles in: its thousand-odd bytes would take many minutes.
        proxy.setRequestRule { _, path in path.contains("/manifest") ? ["if-none-match"] : [] }
        proxy.setRule { _, path, _, status, _ in path.contains("/manifest") && status == 200 ? .drip(drip) : .forward }
        // Before: the access waited for the whole trickle.
        let served = try await SDKFleet.within(30) { try await client.beginAccessing(identifier: "FlowerModels") }
        #expect(served.sequence == 1)
        guard case .cache(.offline(let reason)?) = served.origin else {
            Issue.record("\(served.origin)")
            return
        }
        #expect(reason == "timed out: no complete answer within 2 s")
        let line = CofferError.collectionUnavailable(identifier: "FlowerModels", cause: .offline(reason)).description
        #expect(!line.contains("\n") && !line.contains(fleet.flowers.credential) && !line.contains("deviceID")
                && !line.contains("127.0.0.1"), "\(line)")
    }

    @Test("reportFailure's fallback and endAccessing do not wait for an update whose model trickles in; that update then keeps the last known good")
    func fallbackDuringATricklingUpdate() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let sha = fleet.flowers.sha
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        let (client, cache, summer) = try await LastKnownGoodTests.springThenSummer(fleet, cache: "trickled-update", summer: "classifier-large",
                                                                                 server: proxy.url)
        let large = try #require(summer.entries["FlowerClassifier"])
        #expect(summer.sequence == 2 && large.sha256 == sha["classifier-large"])
        // Spring's classifier leaves blobs/ (the last known good keeps it in previous/).
        await client.endAccessing(identifier: "FlowerModels")
        #expect(!SDKFleet.names(cache, "blobs").contains(sha["classifier"]! + ".coffer"))

        // Winter names the large classifier again, and a model blobs/ does not hold, whose download trickles.
        try await Self.deployWinter(fleet)
        let (drip, update) = try await Self.startTricklingUpdate(through: proxy) {
            try await client.beginAccessing(identifier: "FlowerModels")
        }
        defer { drip.release() }
        defer { update.cancel() }

        // The app finds the large classifier does not work here. Before: the fallback waited for
        // the update, that is for the whole trickle.
        let fellBack = try await SDKFleet.within(30) { await large.report(.failed(reason: "out of memory")) }
        #expect(fellBack?.sequence == 1 && fellBack?.fallback?.sha256 == sha["classifier-large"], "\(String(describing: fellBack?.origin))")
        #expect(try fleet.cachedModels(cache) == ["FlowerClassifier": sha["classifier"]!, "FlowerStylizer": sha["stylizer"]!])
        try await SDKFleet.within(30) { await client.endAccessing(identifier: "FlowerModels") }

        // The update goes on: it must not adopt winter, which names the model that failed.
        drip.release()
        let outcome = try await SDKFleet.within(300) { try await update.value }
        #expect(outcome.sequence == 1, "\(outcome.origin)")
        #expect(outcome.origin.isStale { if case .lastKnownGood(name: "FlowerClassifier", _) = $0 { true } else { false } }, "\(outcome.origin)")
        #expect(try fleet.cachedModels(cache) == ["FlowerClassifier": sha["classifier"]!, "FlowerStylizer": sha["stylizer"]!])
        #expect(try await outcome.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        // What the fallback left unused, the update removed once done; nothing half-downloaded stays.
        #expect(SDKFleet.names(cache, "blobs") == [sha["classifier"]! + ".coffer", sha["stylizer"]! + ".coffer"])
        #expect(SDKFleet.names(cache, "staging").isEmpty)
    }

    @Test("the models a fallback hands the app stay on disk while an update in flight switches to a deployment without them")
    func fallbackModelsStayDuringASwitch() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        let (client, cache, summer) = try await LastKnownGoodTests.springThenSummer(fleet, cache: "fallback-in-use", summer: "classifier-large",
                                                                             server: proxy.url)
        let large = try #require(summer.entries["FlowerClassifier"])
        // Nothing of this client in use any more: spring's classifier leaves blobs/.
        await client.endAccessing(identifier: "FlowerModels")
        #expect(!SDKFleet.names(cache, "blobs").contains(fleet.flowers.sha["classifier"]! + ".coffer"))
        // Autumn names a classifier of its own (not spring's), whose download trickles.
        fleet.session.cli.write("classifier-autumn.bin", CLI.randomData(100_000))
        try await fleet.session.ok("encrypt", "classifier-autumn.bin", "--key", "flowers.modelkey", "--output", "classifier-autumn.coffer", "--quiet")
        try await fleet.deploy("autumn", classifier: "classifier-autumn")
        let (drip, update) = try await Self.startTricklingUpdate(through: proxy) {
            try await client.beginAccessing(identifier: "FlowerModels")
        }
        defer { drip.release() }
        defer { update.cancel() }

        let fellBack = try #require(try await SDKFleet.within(30) { await large.report(.failed(reason: "out of memory")) })
        #expect(fellBack.sequence == 1)
        // The update then adopts autumn (it does not name the failed model) and switches, spring
        // becoming the last known good; the app still holds spring's entries, which must open.
        drip.release()
        let outcome = try await SDKFleet.within(300) { try await update.value }
        #expect(outcome.sequence == 3, "\(outcome.origin)")
        #expect(try await fellBack.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        #expect(try await fellBack.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])
    }

    @Test("coffer report --failed does not wait for a coffer sync of the same cache, in another process, whose model trickles in; the sync then keeps the last known good")
    func reportDuringATricklingSync() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let sha = fleet.flowers.sha
        try await fleet.deploy("spring", classifier: "classifier")
        #expect(try await fleet.sync("edge").status == 0)
        try await fleet.deploy("summer", classifier: "classifier-large")
        #expect(try await fleet.sync("edge").status == 0)
        try await Self.deployWinter(fleet)
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        let proxyURL = proxy.url
        let (drip, sync) = try await Self.startTricklingUpdate(through: proxy) { try await fleet.sync("edge", server: proxyURL) }
        defer { drip.release() }

        // Before: the report waited on the collection's lock, which the sync held while it
        // trickled, until it was stopped here.
        let failed = try await fleet.report("edge", model: "FlowerClassifier", ["--failed", "out of memory"], terminateAfter: 300)
        #expect(failed.status == 0, "\(failed.status) \(failed.stderr)")
        #expect(failed.stdout.hasSuffix(", sequence 1, and refuses this FlowerClassifier until a deployment names another one.\n"), "\(failed.stdout)")

        drip.release()
        let synced = try await sync.value
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stderr.contains("model FlowerClassifier failed on this device (out of memory)"), "\(synced.stderr)")
        let edge = fleet.folder("edge")
        #expect(try fleet.cachedModels(edge) == ["FlowerClassifier": sha["classifier"]!, "FlowerStylizer": sha["stylizer"]!])
        #expect(SDKFleet.names(edge, "blobs") == [sha["classifier"]! + ".coffer", sha["stylizer"]! + ".coffer"])
        #expect(SDKFleet.names(edge, "staging").isEmpty)
    }

    /// Activates deployment winter: the large classifier again (summer's), and the small
    /// classifier's file as the stylizer, which summer's `blobs/` lacks and an update downloads.
    static func deployWinter(_ fleet: SDKFleet) async throws {
        try await fleet.session.ok("deployment", "create", "--collection", "FlowerModels", "--name", "winter",
                                   "--model", "FlowerClassifier=classifier-large.coffer", "--model", "FlowerStylizer=classifier.coffer",
                                   "--activate")
    }

    /// Makes every model download through `proxy` trickle, starts `update` (an update through
    /// `proxy`), and returns once a download trickles (waiting up to 600 s: on a loaded machine the
    /// update may take long to get there) with the trickle, for the test to release, and the
    /// update's task. An update that does not get there is cancelled and its trickle released.
    private static func startTricklingUpdate<T: Sendable>(
        through proxy: TamperingProxy, _ update: @escaping @Sendable () async throws -> T
    ) async throws -> (drip: Drip, update: Task<T, any Error>) {
        let drip = Drip(every: 0.5)
        proxy.setRule { method, path, _, _, _ in method == "GET" && path.hasPrefix("/v1/blobs/") ? .drip(drip) : .forward }
        let task = Task { try await update() }
        do {
            try await SDKFleet.within(600) {
                while !drip.hasStarted { try await Task.sleep(nanoseconds: 20_000_000) }
            }
        } catch {
            task.cancel()
            drip.release()
            throw error
        }
        return (drip, task)
    }
}
