import Fluent
import ModelInspection
import Vapor

/// A deployment as the API shows it: its models with their versions, its rules, its status, and
/// the problems that keep it from being activated (empty when it can be).
struct DeploymentView: Content {
    /// A model version; `facts` is what the team's CLI reported is inside it (`coffer blob upload --key`), if it did.
    struct Version: Content { let versionID: UUID; let sha256: String; let size: Int64; let keyID: String; let facts: ModelReport? }
    struct Rule: Content { let condition: String; let models: [String: Version] }

    let id: UUID
    let collection: String
    let name: String
    var status: String
    let models: [String: Version]
    let rules: [Rule]
    let createdBy: String
    let createdAt: Date?
    var activatedAt: Date?
    let problems: [String]
    /// The deployment's newest staged rollout, if it had one.
    let rollout: RolloutView?

    /// Loads the versions a deployment names and checks its readiness (`fresh`: every blob read
    /// now, for an activation; else what a read within the last minute found).
    static func make(_ deployment: DeploymentRecord, in collection: CollectionRecord, store: any BlobStore, fresh: Bool = false,
                     on db: any Database) async throws -> DeploymentView {
        let versions = try await Self.versions(deployment.spec.versionIDs, on: db)
        let facts = try await Self.facts(of: Set(versions.values.map(\.blobID)), team: collection.$team.id, on: db)
        func view(_ models: [String: UUID]) -> [String: Version] {
            models.compactMapValues { id in
                versions[id].map { Version(versionID: id, sha256: $0.blobID, size: $0.size, keyID: $0.keyID, facts: facts[$0.blobID]) }
            }
        }
        let problems = try await Readiness.problems(of: deployment.spec, in: collection, versions: versions, store: store, fresh: fresh, on: db)
        return DeploymentView(
            id: try deployment.requireID(), collection: collection.identifier, name: deployment.name, status: deployment.status.rawValue,
            models: view(deployment.spec.defaults), rules: deployment.spec.rules.map { Rule(condition: $0.condition, models: view($0.models)) },
            createdBy: deployment.createdBy, createdAt: deployment.createdAt, activatedAt: deployment.activatedAt, problems: problems,
            rollout: try await Rollouts.latest(try deployment.requireID(), on: db).map(RolloutView.init))
    }

    /// The model facts `team` recorded for these blobs, by address.
    static func facts(of blobIDs: Set<String>, team: UUID, on db: any Database) async throws -> [String: ModelReport] {
        guard !blobIDs.isEmpty else { return [:] }
        let rows = try await ModelFactsRecord.query(on: db).filter(\.$team.$id == team).filter(\.$blobID ~~ Array(blobIDs)).all()
        return Dictionary(rows.compactMap { row in row.report.map { (row.blobID, $0) } }, uniquingKeysWith: { first, _ in first })
    }

    static func versions(_ ids: Set<UUID>, on db: any Database) async throws -> [UUID: ModelVersionRecord] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await ModelVersionRecord.query(on: db).filter(\.$id ~~ Array(ids)).all()
        return Dictionary(uniqueKeysWithValues: try rows.map { (try $0.requireID(), $0) })
    }
}
