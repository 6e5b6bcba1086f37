@testable import CofferServer
import BlockingTestSupport
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

    /// A server whose FlowerModels has an active deployment and a draft "v2" naming a new model;
    /// `second` is another model's version, uploaded for an edit.
    static func draft(postgres: Bool) async throws
        -> (server: TestServer, flowers: Flowers, id: String, deploymentID: UUID, collection: CollectionRecord, second: String) {
        let server = try await TestServer.start(postgres: postgres)
        do {
            let flowers = try await Flowers.make(server)
            _ = try await flowers.activatedDeployment()
            let first = try await flowers.upload("first"), second = try await flowers.upload("second")
            let id = try #require(try await flowers.deployment("v2", models: ["FlowerClassifier": first]).id)
            let collection = try #require(try await CollectionRecord.query(on: server.app.db).filter(\.$identifier == "FlowerModels").first())
            return (server, flowers, id, try #require(UUID(uuidString: id)), collection, second)
        } catch {
            try? await server.stop()
            throw error
        }
    }

    @Test("an activation whose checked spec was edited meanwhile is refused and changes nothing", arguments: DraftRaceTests.databases)
    func activationOfAnEditedDraft(postgres: Bool) async throws {
        let (server, flowers, id, deploymentID, collection, second) = try await Self.draft(postgres: postgres)
        defer { Task { try? await server.stop() } }
        let checked = try #require(try await DeploymentRecord.find(deploymentID, on: server.app.db)).spec
        let edited = try await flowers.admin.call("PATCH", Flowers.base + "/deployments/\(id)", json: ["models": ["FlowerClassifier": second]])
        #expect(edited.status == 200, "\(edited.text)")
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
        let (server, flowers, id, deploymentID, collection, second) = try await Self.draft(postgres: true)
        defer { Task { try? await server.stop() } }
        let before = try #require(try await DeploymentRecord.find(deploymentID, on: server.app.db)).spec
        let collectionID = try collection.requireID()

        // Another instance's activation, from outside the server: it holds the collection's row
        // (as every activation does, first) and has made the draft active, not yet committed; it
        // commits once the edit below waits for a lock.
        let activation = try HeldActivation(server)
        defer { activation.end() }
        try await activation.start(collection: collectionID, deployment: id)
        // The edit reads "draft" (the activation has not committed) and then waits for the row.
        async let editing = flowers.admin.call("PATCH", Flowers.base + "/deployments/\(id)", json: ["models": ["FlowerClassifier": second]])
        // Ended before the request is awaited if this fails: the request waits on the held rows.
        do { try await activation.commitOnceSomeoneWaits() } catch { activation.end(); throw error }
        let edit = try await editing

        #expect(edit.status == 409, "\(edit.status) \(edit.text)")
        let after = try #require(try await DeploymentRecord.find(deploymentID, on: server.app.db))
        #expect(after.status == .active)
        #expect(after.spec == before, "the active deployment's models changed under its sequence number")
    }

    @Test("an archive that read an inactive deployment which is activated before it writes is refused 409 (PostgreSQL)",
          .enabled(if: TestServer.postgresURL != nil, "set COFFER_TEST_DATABASE_URL to run against PostgreSQL"))
    func archiveOfADeploymentActivatedMeanwhile() async throws {
        let (server, flowers, id, deploymentID, collection, _) = try await Self.draft(postgres: true)
        defer { Task { try? await server.stop() } }
        let collectionID = try collection.requireID()
        let activation = try HeldActivation(server)
        defer { activation.end() }
        try await activation.start(collection: collectionID, deployment: id)
        async let archiving = flowers.admin.call("POST", Flowers.base + "/deployments/\(id)/archive")
        do { try await activation.commitOnceSomeoneWaits() } catch { activation.end(); throw error }
        let archive = try await archiving
        #expect(archive.status == 409, "\(archive.status) \(archive.text)")
        #expect(try await DeploymentRecord.find(deploymentID, on: server.app.db)?.status == .active)
    }
}

/// An activation by another connection (psql), held open: it has bumped the collection's sequence
/// and made a deployment active, and commits only when told — once a request of the server waits
/// for one of its row locks, so a test sees the request meet the activation half-way every time,
/// however slow the machine. It waits on an advisory lock a second psql session holds, and the
/// test ends that session to let it commit. Every query of the test goes through psql too (the
/// server's pool is busy with the request that waits), and both sessions carry an application name
/// of their own, so that ``end()`` — which every test calls, also when it fails half-way — ends
/// whatever is left of them on the server, not only the psql clients.
struct HeldActivation: Sendable {
    let url: String
    let lock: Int64
    var name: String { "coffer-held-\(lock)" }

    init(_ server: TestServer) throws {
        url = try #require(server.configuration.databaseURL)
        lock = Int64.random(in: 1...Int64(Int32.max))
    }

    /// Holds the activation of `deployment` in `collection`, uncommitted, until ``commitOnceSomeoneWaits()``.
    func start(collection: UUID, deployment: String) async throws {
        try psql("SELECT pg_advisory_lock(\(lock)); SELECT pg_sleep(120);")
        try await until("the blocker holds the advisory lock") { try await advisory(granted: true) > 0 }
        try psql("""
            BEGIN; \
            UPDATE collections SET sequence = sequence + 1, active_deployment_id = '\(deployment.lowercased())' WHERE id = '\(collection.uuidString.lowercased())'; \
            UPDATE deployments SET status = 'active' WHERE id = '\(deployment.lowercased())'; \
            SELECT pg_advisory_xact_lock(\(lock)); COMMIT;
            """)
        try await until("the activation holds its rows") { try await advisory(granted: false) > 0 }
    }

    /// Waits until some session of this database waits for a row or table lock (the request the
    /// test sent), then lets the activation commit and waits until its session has ended (the
    /// tests then find the deployment active: it committed).
    func commitOnceSomeoneWaits() async throws {
        // A row lock is waited for on the holder's transaction ID, a lock that names no database.
        try await until("a request waits for the activation's locks") {
            try await count("SELECT COUNT(*) FROM pg_locks WHERE NOT granted AND locktype <> 'advisory' "
                            + "AND pid IN (SELECT pid FROM pg_stat_activity WHERE datname = current_database())") > 0
        }
        _ = try await count("SELECT COUNT(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                            + "AND objid::bigint = \(lock) AND \(Self.here)")
        try await until("the activation committed") {
            try await count("SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = '\(name)'") == 0
        }
    }

    /// Ends both sessions on the server, whatever state they are in (a test that failed half-way).
    func end() {
        _ = try? ChildProcess.run(Self.env, ["psql", url, "-tAq", "-c",
                                             "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(name)'"])
    }

    private static let env = URL(fileURLWithPath: "/usr/bin/env")

    private static let here = "database = (SELECT oid FROM pg_database WHERE datname = current_database())"

    /// Sessions of this database holding (`granted`) or waiting for the advisory lock.
    private func advisory(granted: Bool) async throws -> Int {
        try await count("SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND objid::bigint = \(lock) AND granted = \(granted) AND \(Self.here)")
    }

    /// The one number `query` answers, asked through psql (off the test's task pool: it blocks).
    private func count(_ query: String) async throws -> Int {
        let url = self.url
        return try await offThePool {
            let (status, output) = try ChildProcess.run(Self.env, ["psql", url, "-tA", "-v", "ON_ERROR_STOP=1", "-c", query])
            let text = String(decoding: output, as: UTF8.self)
            guard status == 0, let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw TestFailure("psql answered \(status): \(text.prefix(200))")
            }
            return number
        }
    }

    /// Starts psql running `command` in a session named ``name``; it runs on while the test goes on.
    private func psql(_ command: String) throws {
        _ = try ChildProcess(executable: Self.env, arguments: ["psql", url, "-q", "-v", "ON_ERROR_STOP=1", "-c", command],
                             environment: ProcessInfo.processInfo.environment.merging(["PGAPPNAME": name]) { $1 })
    }

    private func until(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(60)
        while try await !condition() {
            guard Date() < deadline else { throw TestFailure("timed out: \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
