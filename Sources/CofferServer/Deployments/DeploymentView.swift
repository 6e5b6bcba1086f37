import Fluent
import Vapor

/// A deployment as the API shows it: its models with their versions, its rules, its status, and
/// the problems that keep it from being activated (empty when it can be).
struct DeploymentView: Content {
    struct Version: Content { let versionID: UUID; let sha256: String; let size: Int64; let keyID: String }
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

    /// Loads the versions a deployment names and checks its readiness.
    static func make(_ deployment: DeploymentRecord, in collection: CollectionRecord, store: BlobStore, on db: any Database) async throws -> DeploymentView {
        let versions = try await Self.versions(deployment.spec.versionIDs, on: db)
        func view(_ models: [String: UUID]) -> [String: Version] {
            models.compactMapValues { id in
                versions[id].map { Version(versionID: id, sha256: $0.blobID, size: $0.size, keyID: $0.keyID) }
            }
        }
        let problems = try await Readiness.problems(of: deployment.spec, in: collection, versions: versions, store: store, on: db)
        return DeploymentView(
            id: try deployment.requireID(), collection: collection.identifier, name: deployment.name, status: deployment.status.rawValue,
            models: view(deployment.spec.defaults), rules: deployment.spec.rules.map { Rule(condition: $0.condition, models: view($0.models)) },
            createdBy: deployment.createdBy, createdAt: deployment.createdAt, activatedAt: deployment.activatedAt, problems: problems)
    }

    static func versions(_ ids: Set<UUID>, on db: any Database) async throws -> [UUID: ModelVersionRecord] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await ModelVersionRecord.query(on: db).filter(\.$id ~~ Array(ids)).all()
        return Dictionary(uniqueKeysWithValues: try rows.map { (try $0.requireID(), $0) })
    }
}
