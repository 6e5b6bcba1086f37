@testable import CofferServer
import Fluent
import Foundation
import SQLKit
import Testing

/// Edits, archives and activations of one deployment at the same moment. Each read the
/// deployment's status outside the transaction that wrote it: an edit that had read "draft" saved
/// its models over a deployment activated meanwhile (devices got other models under the same
/// sequence number, their keys not deliverable); an activation activated a draft edited after its
/// readiness check; an archive could archive the deployment just activated.
@Suite("Deployment changes that race")
struct DraftRaceTests {
    /// SQLite, and PostgreSQL when COFFER_TEST_DATABASE_URL names one (true).
    static var databases: [Bool] { TestServer.postgresURL == nil ? [false] : [false, true] }

    @Test("an activation whose checked spec was edited meanwhile is refused and changes nothing", arguments: DraftRaceTests.databases)
    func activationOfAnEditedDraft(postgres: Bool) async throws {
        let server = try await TestServer.start(postgres: postgres)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        _ = try await flowers.activatedDeployment()
        let first = try await flowers.upload("first"), second = try await flowers.upload("second")
        let id = try #require(try await flowers.deployment("v2", models: ["FlowerClassifier": first]).id)
        let deploymentID = try #require(UUID(uuidString: id))
        let checked = try #require(try await DeploymentRecord.find(deploymentID, on: server.app.db)).spec
        let edited = try await flowers.admin.call("PATCH", Flowers.base + "/deployments/\(id)", json: ["models": ["FlowerClassifier": second]])
        #expect(edited.status == 200, "\(edited.text)")
        let collection = try #require(try await CollectionRecord.query(on: server.app.db).filter(\.$identifier == "FlowerModels").first())
        let sequence = collection.sequence

        await #expect(throws: APIError.self) {
            _ = try await Activation.activate(deploymentID, in: try collection.requireID(), kind: "activate", actor: "test", at: Date(),
                                              checked: checked, on: server.app.db)
        }
        let after = try #require(try await CollectionRecord.find(collection.id, on: server.app.db))
        #expect(after.sequence == sequence && after.activeDeploymentID == collection.activeDeploymentID, "nothing changed")
        #expect(try await DeploymentRecord.find(deploymentID, on: server.app.db)?.status == .draft)
        await #expect(throws: APIError.self) {
            _ = try await Rollouts.start(deploymentID, in: try collection.requireID(), plan: try RolloutPlan(stages: [10, 100], stageHours: nil, haltAt: nil, minReports: nil),
                                         actor: "test", at: Date(), checked: checked, on: server.app.db)
        }
        #expect(try await DeploymentRecord.find(deploymentID, on: server.app.db)?.status == .draft)

        // The spec as it is now activates.
        let current = try #require(try await DeploymentRecord.find(deploymentID, on: server.app.db)).spec
        let activated = try await Activation.activate(deploymentID, in: try collection.requireID(), kind: "activate", actor: "test", at: Date(),
                                                      checked: current, on: server.app.db)
        #expect(activated == sequence + 1)
    }

    @Test("an edit that read a draft which is activated before it writes is refused 409, and the active models stay (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func editOfADraftActivatedMeanwhile() async throws {
        let server = try await TestServer.start(postgres: true)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        _ = try await flowers.activatedDeployment()
        let first = try await flowers.upload("first"), second = try await flowers.upload("second")
        let id = try #require(try await flowers.deployment("v2", models: ["FlowerClassifier": first]).id)
        let deploymentID = try #require(UUID(uuidString: id))
        let before = try #require(try await DeploymentRecord.find(deploymentID, on: server.app.db)).spec
        let collection = try #require(try await CollectionRecord.query(on: server.app.db).filter(\.$identifier == "FlowerModels").first())
        let collectionID = try collection.requireID()
        let url = try #require(server.configuration.databaseURL)

        // Another instance's activation, from outside the server: it holds the collection's row
        // (as every activation does, first) and has made the draft active, not yet committed.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = ["psql", url, "-q", "-v", "ON_ERROR_STOP=1", "-c", """
            BEGIN; \
            UPDATE collections SET sequence = sequence + 1, active_deployment_id = '\(id.lowercased())' WHERE id = '\(collectionID.uuidString.lowercased())'; \
            UPDATE deployments SET status = 'active' WHERE id = '\(id.lowercased())'; \
            SELECT pg_sleep(3); COMMIT;
            """]
        holder.standardOutput = FileHandle.nullDevice
        try holder.run()
        let sql = try #require(server.app.db as? any SQLDatabase)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            do {
                try await sql.raw("SELECT id FROM collections WHERE id = \(bind: collectionID) FOR UPDATE NOWAIT").run()
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                break
            }
        }
        // The edit reads "draft" (the activation has not committed) and then waits for the row.
        let edit = try await flowers.admin.call("PATCH", Flowers.base + "/deployments/\(id)", json: ["models": ["FlowerClassifier": second]])
        while holder.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        #expect(holder.terminationStatus == 0)

        #expect(edit.status == 409, "\(edit.status) \(edit.text)")
        let after = try #require(try await DeploymentRecord.find(deploymentID, on: server.app.db))
        #expect(after.status == .active)
        #expect(after.spec == before, "the active deployment's models changed under its sequence number")
    }

    @Test("an archive that read an inactive deployment which is activated before it writes is refused 409 (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func archiveOfADeploymentActivatedMeanwhile() async throws {
        let server = try await TestServer.start(postgres: true)
        defer { Task { try? await server.stop() } }
        let flowers = try await Flowers.make(server)
        _ = try await flowers.activatedDeployment()
        let id = try #require(try await flowers.deployment("v2", models: ["FlowerClassifier": try await flowers.upload("first")]).id)
        let deploymentID = try #require(UUID(uuidString: id))
        let collection = try #require(try await CollectionRecord.query(on: server.app.db).filter(\.$identifier == "FlowerModels").first())
        let collectionID = try collection.requireID()
        let url = try #require(server.configuration.databaseURL)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = ["psql", url, "-q", "-v", "ON_ERROR_STOP=1", "-c", """
            BEGIN; \
            UPDATE collections SET sequence = sequence + 1, active_deployment_id = '\(id.lowercased())' WHERE id = '\(collectionID.uuidString.lowercased())'; \
            UPDATE deployments SET status = 'active' WHERE id = '\(id.lowercased())'; \
            SELECT pg_sleep(3); COMMIT;
            """]
        holder.standardOutput = FileHandle.nullDevice
        try holder.run()
        let sql = try #require(server.app.db as? any SQLDatabase)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            do {
                try await sql.raw("SELECT id FROM collections WHERE id = \(bind: collectionID) FOR UPDATE NOWAIT").run()
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                break
            }
        }
        let archive = try await flowers.admin.call("POST", Flowers.base + "/deployments/\(id)/archive")
        while holder.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        #expect(holder.terminationStatus == 0)
        #expect(archive.status == 409, "\(archive.status) \(archive.text)")
        #expect(try await DeploymentRecord.find(deploymentID, on: server.app.db)?.status == .active)
    }
}
