import CofferFormat
import Fluent
import Foundation

/// Whether a deployment can be activated: a model for every model name of the collection, only
/// names the collection has, and every model a valid Coffer container on the server, sealed with a
/// live key of the team. Each problem is one sentence.
enum Readiness {
    static func problems(
        of spec: DeploymentSpec, in collection: CollectionRecord, versions: [UUID: ModelVersionRecord], store: any BlobStore,
        fresh: Bool = false, on db: any Database
    ) async throws -> [String] {
        var problems: [String] = []
        for name in collection.modelNames where spec.defaults[name] == nil {
            problems.append("no default model for \(name)")
        }
        let named = Set(spec.defaults.keys).union(spec.rules.flatMap(\.models.keys))
        for name in named.sorted() where !collection.modelNames.contains(name) {
            problems.append("\(name) is no longer a model of \(collection.identifier)")
        }
        let keyIDs = Set(versions.values.map(\.keyID))
        let keys = keyIDs.isEmpty ? [] : try await KeyRecord.query(on: db).filter(\.$id ~~ Array(keyIDs)).all()
        let live = Set(keys.filter { $0.revokedAt == nil && $0.$team.id == collection.$team.id }.compactMap(\.id))
        // Each blob once, however many names and rules name it (``BlobStore/facts(of:)``).
        var found: [String: String?] = [:]
        for id in spec.versionIDs.sorted(by: { $0.uuidString < $1.uuidString }) {
            guard let version = versions[id] else {
                problems.append("model version \(id) does not exist")
                continue
            }
            if found[version.blobID] == nil { found[version.blobID] = try await Self.problem(of: version.blobID, in: store, fresh: fresh) }
            if let problem = found[version.blobID] ?? nil { problems.append("\(version.modelName): \(problem)") }
            if !live.contains(version.keyID) {
                problems.append("\(version.modelName): key \(version.keyID) is revoked or not a key of this team")
            }
        }
        return problems
    }

    /// What is wrong with blob `address` in `store`, nil when nothing; `fresh`: read now, not what
    /// a read within the last minute found (an activation decides on the blob as it is). What an
    /// object store answered (its endpoint, its bucket) is not for a team's page.
    private static func problem(of address: String, in store: any BlobStore, fresh: Bool) async throws -> String? {
        do {
            let stored = fresh ? try await store.header(of: address) != nil : try await store.facts(of: address) != nil
            return stored ? nil : "blob \(address.prefix(12))… is missing from the server"
        } catch let error as ContainerError {
            return "blob \(address.prefix(12))… is not a valid Coffer container (\(error))"
        } catch {
            return "the blob store did not answer for blob \(address.prefix(12))…; look again later"
        }
    }
}
