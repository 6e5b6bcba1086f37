import CofferFormat
import Fluent
import Foundation

/// One deployment, compiled for manifests: its rules parsed and the entries of each target built.
struct CompiledDeployment: Sendable {
    let deploymentID: UUID
    let rolloutSeed: String
    let defaults: [String: Manifest.Entry]
    /// Each rule's condition and the full model set a matching device gets.
    let rules: [(condition: TargetingCondition, models: [String: Manifest.Entry])]

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

    /// The models of a target.
    func models(target: Int) -> [String: Manifest.Entry] { target == 0 ? defaults : rules[target - 1].models }

    /// Reads a deployment and the model versions it names; nil when there is no such deployment.
    static func load(_ deploymentID: UUID, publicURL: String?, on db: any Database) async throws -> CompiledDeployment? {
        guard let deployment = try await DeploymentRecord.find(deploymentID, on: db) else { return nil }
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
        return CompiledDeployment(deploymentID: deploymentID, rolloutSeed: deployment.rolloutSeed, defaults: defaults, rules: rules)
    }
}
