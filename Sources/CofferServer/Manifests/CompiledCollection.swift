import CofferFormat
import Fluent
import Foundation
import NIOCore

/// A collection's active deployment, ready to answer devices without the database: its rules
/// parsed, its manifest entries built, and signed manifests kept per target until re-signing is due.
struct CompiledCollection: Sendable {
    let collectionID: UUID
    let identifier: String
    let teamID: UUID
    let sequence: Int64
    let deploymentID: UUID
    let rolloutSeed: String
    let defaults: [String: Manifest.Entry]
    /// Each rule's condition and the full model set a matching device gets.
    let rules: [(condition: TargetingCondition, models: [String: Manifest.Entry])]
    /// When the database last confirmed this is current.
    var age: CacheAge
    /// Signed manifests by target (0 = defaults, N = rule N), with the signing period they belong to.
    var signed: [Int: SignedVariant] = [:]

    struct SignedVariant: Sendable {
        let period: Int64
        let answer: ManifestService.Answer
    }

    /// The target for a device: the first rule that matches (1-based), else 0 for the defaults.
    func target(for device: DeviceAttributes) -> Int {
        guard !rules.isEmpty else { return 0 }
        // The bucket costs a SHA-256: only rollout clauses need it.
        let bucket = usesRollout ? RolloutBucket.bucket(deviceID: device.deviceID, seed: rolloutSeed) : 0
        guard let index = rules.firstIndex(where: { $0.condition.matches(device, bucket: bucket) }) else { return 0 }
        return index + 1
    }

    /// Whether any rule has a rollout clause.
    var usesRollout: Bool { rules.contains { $0.condition.rolloutBasisPoints != nil } }

    /// The manifest for a target, unsigned.
    func manifest(target: Int, issuedAt: Date, expiresAt: Date) -> Manifest {
        Manifest(collection: identifier, teamID: teamID.uuidString.lowercased(), deploymentID: deploymentID.uuidString.lowercased(),
                 sequence: UInt64(sequence), target: target == 0 ? "default" : "rule \(target)",
                 issuedAt: issuedAt, expiresAt: expiresAt, models: target == 0 ? defaults : rules[target - 1].models)
    }

    /// Reads a collection and its active deployment; nil when the collection has none active.
    static func load(_ collection: CollectionRecord, publicURL: String?, on db: any Database) async throws -> CompiledCollection? {
        guard let activeID = collection.activeDeploymentID, let deployment = try await DeploymentRecord.find(activeID, on: db) else { return nil }
        let versions = try await DeploymentView.versions(deployment.spec.versionIDs, on: db)
        func entries(_ models: [String: UUID]) -> [String: Manifest.Entry] {
            models.compactMapValues { id in
                versions[id].map {
                    Manifest.Entry(versionID: id.uuidString.lowercased(), sha256: $0.blobID, size: $0.size,
                                   url: (publicURL ?? "") + "/v1/blobs/" + $0.blobID, keyID: $0.keyID)
                }
            }
        }
        let defaults = entries(deployment.spec.defaults)
        let rules = try deployment.spec.rules.map { rule in
            (condition: try TargetingCondition(parsing: rule.condition), models: defaults.merging(entries(rule.models)) { $1 })
        }
        return CompiledCollection(
            collectionID: try collection.requireID(), identifier: collection.identifier, teamID: collection.$team.id,
            sequence: collection.sequence, deploymentID: activeID, rolloutSeed: deployment.rolloutSeed,
            defaults: defaults, rules: rules, age: CacheAge())
    }
}
