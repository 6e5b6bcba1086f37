import CofferFormat
import Fluent
import Foundation
import NIOCore

/// A collection's active deployment, ready to answer devices without the database: its rules
/// parsed, its manifest entries built, and signed manifests kept per target until re-signing is due.
/// While a staged rollout runs, the deployment it stages from is compiled too, and each device's
/// rollout bucket picks one of the two.
struct CompiledCollection: Sendable {
    let collectionID: UUID
    let identifier: String
    let teamID: UUID
    let sequence: Int64
    /// The active deployment.
    let current: CompiledDeployment
    /// While a staged rollout runs: the devices whose bucket is below `basisPoints` get `current`,
    /// the others `previous`.
    let stage: Stage?
    /// When the database last confirmed this is current.
    var age: CacheAge
    /// Signed manifests by variant, with the signing period they belong to.
    var signed: [Variant: SignedVariant] = [:]

    /// A staged rollout's split of the devices.
    struct Stage: Sendable {
        let basisPoints: Int
        let previous: CompiledDeployment
    }

    /// What a device gets: the active deployment or, outside a stage, the previous one; and which
    /// of its targets (0 = defaults, N = rule N).
    struct Variant: Hashable, Sendable {
        let previous: Bool
        let target: Int
    }

    struct SignedVariant: Sendable {
        let period: Int64
        let answer: ManifestService.Answer
    }

    var deploymentID: UUID { current.deploymentID }

    /// The deployment and target for a device. Outside a stage the device's bucket (for the active
    /// deployment's rollout seed) is at or above the stage's basis points.
    func variant(for device: DeviceAttributes) -> Variant {
        if let stage, RolloutBucket.bucket(deviceID: device.deviceID, seed: current.rolloutSeed) >= stage.basisPoints {
            return Variant(previous: true, target: stage.previous.target(for: device))
        }
        return Variant(previous: false, target: current.target(for: device))
    }

    /// The deployment a variant comes from.
    func deployment(of variant: Variant) -> CompiledDeployment {
        variant.previous ? (stage?.previous ?? current) : current
    }

    /// The manifest for a variant, unsigned.
    func manifest(_ variant: Variant, issuedAt: Date, expiresAt: Date) -> Manifest {
        let deployment = deployment(of: variant)
        return Manifest(collection: identifier, teamID: teamID.uuidString.lowercased(), deploymentID: deployment.deploymentID.uuidString.lowercased(),
                        sequence: UInt64(sequence), target: variant.target == 0 ? "default" : "rule \(variant.target)",
                        issuedAt: issuedAt, expiresAt: expiresAt, models: deployment.models(target: variant.target))
    }

    /// Reads a collection, its active deployment and, while a staged rollout of it runs, the
    /// deployment it stages from; nil when the collection has none active.
    static func load(_ collection: CollectionRecord, publicURL: String?, on db: any Database) async throws -> CompiledCollection? {
        guard let activeID = collection.activeDeploymentID, let current = try await CompiledDeployment.load(activeID, publicURL: publicURL, on: db)
        else { return nil }
        var stage: Stage?
        if let rollout = try await Rollouts.running(activeID, on: db),
           let previous = try await CompiledDeployment.load(rollout.$previousDeployment.id, publicURL: publicURL, on: db) {
            stage = Stage(basisPoints: rollout.stagePercent * RolloutBucket.count / 100, previous: previous)
        }
        return CompiledCollection(
            collectionID: try collection.requireID(), identifier: collection.identifier, teamID: collection.$team.id,
            sequence: collection.sequence, current: current, stage: stage, age: CacheAge())
    }
}
