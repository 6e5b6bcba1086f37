import CofferFormat
import Foundation
import Testing

@testable import CofferServer

/// The report buffer is shared by every team of an instance: one team's flood (many apps, each
/// within its budgets, or a slow database) must not keep another team's reports out — a team's
/// `failed` reports are what halts its bad rollout. Over HTTP, with a buffer of 100 rows that is
/// never flushed during the test.
@Suite("Report buffer shared by teams")
struct ReportBufferShareTests {
    @Test("a team holding a quarter of the buffer gets 503 past three quarters; another team's reports still get in, up to a quarter")
    func floodLeavesRoom() async throws {
        let server = try await TestServer.start { configuration in
            configuration.reportBufferRows = 100
            configuration.reportFlushInterval = 3600
        }
        defer { Task { try? await server.stop() } }
        try await server.app.asyncBoot()
        let fleet = Fleet(try await Flowers.make(server), size: 1)
        let spring = try await fleet.deployment("spring")
        #expect(try await fleet.flowers.activate(spring).status == 200)
        let flowers = try #require(try await fleet.manifests()["device-0"])

        // Another team, with its own app, key and activated deployment.
        let world = fleet.flowers.world
        try await world.team("U")
        let birdsApp = try await world.app(in: "U", name: "Birds")
        let collection = try await world.release(try await world.key(in: "U"), in: "U", to: [birdsApp.id])
        let reply = try await fleet.flowers.manifest(["deviceID": "bird-0"], app: birdsApp, collection: collection)
        #expect(reply.status == 200, "\(reply.text)")
        let birds = try SignedManifest.verify(reply.body, using: try await fleet.flowers.signingKey())

        var serial = 0
        func events(_ manifest: Manifest, _ count: Int, model: String) -> [[String: Any]] {
            (0..<count).map { _ in
                serial += 1
                return Fleet.event(manifest, device: "device-\(serial)", model: model, outcome: "loaded")
            }
        }
        // Team T fills three quarters: 60 rows, then a batch of 20 would pass 75 and is refused
        // whole; 15 more fit exactly, then nothing.
        for _ in 0..<3 {
            let accepted = try await fleet.report(events(flowers, 20, model: "FlowerClassifier"))
            #expect(accepted.status == 200 && accepted.object["accepted"] as? Int == 20, "\(accepted.text)")
        }
        let refused = try await fleet.report(events(flowers, 20, model: "FlowerClassifier"))
        #expect(refused.status == 503 && refused.errorCode == "reports_backlog", "\(refused.text)")
        #expect(refused.header("Retry-After") == "30")
        #expect(try await fleet.report(events(flowers, 15, model: "FlowerClassifier")).status == 200)
        #expect(try await fleet.report(events(flowers, 1, model: "FlowerClassifier")).status == 503)

        // Team U's devices still report: the last quarter is theirs, up to 25 rows.
        let bird = try await fleet.report(events(birds, 20, model: "m"), app: birdsApp)
        #expect(bird.status == 200 && bird.object["accepted"] as? Int == 20, "\(bird.text)")
        #expect(try await fleet.report(events(birds, 6, model: "m"), app: birdsApp).status == 503)
        #expect(try await fleet.report(events(birds, 5, model: "m"), app: birdsApp).status == 200)
        // Full now, for everyone.
        #expect(try await fleet.report(events(birds, 1, model: "m"), app: birdsApp).status == 503)
        #expect(try await fleet.report(events(flowers, 1, model: "FlowerClassifier")).status == 503)
    }
}
