import CofferFormat
import Foundation
import Testing

@testable import CofferServer

/// The report buffer is shared by every team of an instance: one team's flood (many apps, each
/// within its budgets, or a slow database) must not keep another team's reports out — a team's
/// `failed` reports are what halts its bad rollout. Over HTTP, with the smallest buffer the setting
/// allows (1000 rows), never flushed during the test.
@Suite("Report buffer shared by teams")
struct ReportBufferShareTests {
    @Test("past three quarters of the buffer a team's batch gets 503 once the team would hold a quarter; another team's still get in")
    func floodLeavesRoom() async throws {
        let server = try await TestServer.start { configuration in
            configuration.reportBufferRows = ReportBuffer.minimumCapacity
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
        // `count` events, each from a device not seen before: `count` rows.
        func events(_ manifest: Manifest, _ count: Int, model: String) -> [[String: Any]] {
            (0..<count).map { _ in
                serial += 1
                return Fleet.event(manifest, device: "device-\(serial)", model: model, outcome: "loaded")
            }
        }
        func flowerReport(_ count: Int) async throws -> HTTP.Reply { try await fleet.report(events(flowers, count, model: "FlowerClassifier")) }
        func birdReport(_ count: Int) async throws -> HTTP.Reply { try await fleet.report(events(birds, count, model: "m"), app: birdsApp) }

        #expect(try await birdReport(100).status == 200)
        // Team T fills three quarters (750 rows with U's 100): a batch past them is refused whole.
        for _ in 0..<6 {
            let accepted = try await flowerReport(100)
            #expect(accepted.status == 200 && accepted.object["accepted"] as? Int == 100, "\(accepted.text)")
        }
        let refused = try await flowerReport(100)
        #expect(refused.status == 503 && refused.errorCode == "reports_backlog", "\(refused.text)")
        #expect(refused.text.contains("share"), "\(refused.text)")
        #expect(refused.header("Retry-After") == "30")
        #expect(try await flowerReport(50).status == 200)
        #expect(try await flowerReport(1).status == 503)

        // Team U still reports, up to a quarter (250 rows) of its own — refused by that rule at
        // 950 rows, where the buffer would still have room.
        let bird = try await birdReport(100)
        #expect(bird.status == 200 && bird.object["accepted"] as? Int == 100, "\(bird.text)")
        let past = try await birdReport(100)
        #expect(past.status == 503 && past.text.contains("share"), "\(past.text)")
        #expect(try await birdReport(50).status == 200)
        #expect(try await flowerReport(1).status == 503)
    }
}
