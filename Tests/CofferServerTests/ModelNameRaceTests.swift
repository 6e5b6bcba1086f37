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
        let replies = try await withThrowingTaskGroup(of: HTTP.Reply.self) { group in
            for name in names {
                group.addTask { try await Self.add(name, flowers) }
            }
            return try await group.reduce(into: [HTTP.Reply]()) { $0.append($1) }
        }
        let refused = replies.filter { $0.status != 200 }.map { "\($0.status) \(String(decoding: $0.body.prefix(300), as: UTF8.self))" }
        #expect(refused.isEmpty, "\(refused)")
        let collection = try #require(try await CollectionRecord.query(on: server.app.db).filter(\.$identifier == "FlowerModels").first())
        #expect(Set(collection.modelNames) == Set(["FlowerClassifier", "FlowerStylizer"] + names), "\(collection.modelNames)")
    }

    /// Adds `name` as a client would: a 503 `busy` (no database connection came free in the pool's
    /// 10 s: twelve writers on SQLite's two connections, with every suite running on two cores; CI
    /// once saw one of the twelve refused, its status not recorded) says the change was not made,
    /// so it is tried again. A lost update is a 200 whose name is missing, which this never hides.
    private static func add(_ name: String, _ flowers: Flowers) async throws -> HTTP.Reply {
        var reply = try await flowers.admin.call("POST", Flowers.base + "/models", json: ["name": name])
        for _ in 1..<5 where reply.status == 503 && reply.errorCode == "busy" {
            try await Task.sleep(for: .seconds(Int(reply.header("Retry-After") ?? "") ?? 2))
            reply = try await flowers.admin.call("POST", Flowers.base + "/models", json: ["name": name])
        }
        return reply
    }
}
