import Coffer
import Foundation
import Testing

/// A server or CDN that trickles its answers — the head at once, then one byte every half second,
/// never finishing — so that a transport's idle timeout never fires (``Drip``): a small request
/// used to go on for as long as the transport let a request live (a day, a week); now it ends at
/// its deadline.
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
}
