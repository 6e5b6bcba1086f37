import CofferFormat
@testable import CofferServer
import Foundation
import Testing

/// `PUT /v1/teams/T/blobs/ADDRESS/facts` and the facts in deployment answers, through the real HTTP interface.
@Suite("Model facts")
struct ModelFactsTests {
    static var report: [String: Any] { [
        "format": "mlmodel", "size": 311, "notes": [],
        "coreML": ["modelType": "neuralNetworkClassifier", "specificationVersion": 4, "minimumDeploymentTargets": ["iOS": "13.0"],
                   "inputs": [], "outputs": [], "states": [], "classLabels": ["cat", "dog"],
                   "metadata": ["userDefined": [:]], "layerCounts": ["innerProduct": 1], "parameterCount": 15, "weightBytes": 60,
                   "isUpdatable": false],
    ] }

    static func run(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let classifier = try await flowers.upload("classifier")
        let stylizer = try await flowers.upload("stylizer")
        let path = "/v1/teams/T/blobs/\(classifier)/facts"

        #expect(try await flowers.admin.call("PUT", path, json: Self.report).status == 204)
        // Recording again replaces.
        var changed = Self.report
        changed["size"] = 312
        #expect(try await flowers.admin.call("PUT", path, json: changed).status == 204)

        let (id, reply) = try await flowers.deployment("with facts", models: ["FlowerClassifier": classifier, "FlowerStylizer": stylizer])
        #expect(reply.status == 201, "\(reply.text)")
        let models = try #require(reply.object["models"] as? [String: Any])
        let facts = try #require((models["FlowerClassifier"] as? [String: Any])?["facts"] as? [String: Any])
        #expect(facts["size"] as? Int == 312)
        #expect((facts["coreML"] as? [String: Any])?["classLabels"] as? [String] == ["cat", "dog"])
        #expect((models["FlowerStylizer"] as? [String: Any])?["facts"] == nil)
        let fetched = try await flowers.admin.call("GET", Flowers.base + "/deployments/\(try #require(id))")
        #expect(((fetched.object["models"] as? [String: Any])?["FlowerClassifier"] as? [String: Any])?["facts"] != nil)

        // Not a model report, an unknown blob, too large: refused.
        #expect(try await flowers.admin.call("PUT", path, json: ["format": "nonsense"]).status == 400)
        #expect(try await flowers.admin.call("PUT", "/v1/teams/T/blobs/\(String(repeating: "0", count: 64))/facts", json: Self.report).status == 404)
        var huge = Self.report
        huge["notes"] = [String(repeating: "x", count: 300 * 1024)]
        #expect(try await flowers.admin.call("PUT", path, json: huge).status == 413)

        // Counts no inspection writes: negative ones are refused; ones whose total passes Int.max
        // are kept and shown saturated (their sum trapped, taking the server down for every team).
        var negative = Self.report
        negative["coreML"] = (Self.report["coreML"] as? [String: Any] ?? [:]).merging(["layerCounts": ["a": -1]]) { $1 }
        let refused = try await flowers.admin.call("PUT", path, json: negative)
        #expect(refused.status == 400 && refused.errorCode == "invalid_facts", "\(refused.text)")
        var overflowing = Self.report
        overflowing["coreML"] = (Self.report["coreML"] as? [String: Any] ?? [:]).merging(["layerCounts": ["a": Int.max, "b": 1]]) { $1 }
        #expect(try await flowers.admin.call("PUT", path, json: overflowing).status == 204)
        let owner = try await DashboardTests.ownerBrowser(server)
        let page = try await owner.get("/dashboard/teams/T/collections/FlowerModels/deployments/\(try #require(id))")
        #expect(page.status == 200)
        #expect(page.html.contains("\(Int.max) layers"), "the total, saturated")
    }

    @Test("facts are recorded per blob, replaced on a second report, shown with deployments, and checked (SQLite)")
    func sqlite() async throws { try await Self.run(.sqlite) }

    @Test("the same over PostgreSQL", .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func postgres() async throws { try await Self.run(.postgres) }
}
