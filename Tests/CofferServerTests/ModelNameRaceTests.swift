@testable import CofferServer
import Fluent
import Foundation
import Testing

/// A collection's model names are read, changed and written under the collection's lock: changes
/// made at the same moment all land.
@Suite("Model name races")
struct ModelNameRaceTests {
    @Test("model names added at the same moment are all kept", arguments: Backend.allCases)
    func concurrentAdditions(_ backend: Backend) async throws {
        let server = try await TestServer.start(postgres: backend.isPostgres)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        let names = (1...12).map { "Extra\($0)" }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for name in names {
                group.addTask { try await flowers.admin.call("POST", Flowers.base + "/models", json: ["name": name]).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        let collection = try #require(try await CollectionRecord.query(on: server.app.db).filter(\.$identifier == "FlowerModels").first())
        #expect(Set(collection.modelNames) == Set(["FlowerClassifier", "FlowerStylizer"] + names), "\(collection.modelNames)")
    }
}
