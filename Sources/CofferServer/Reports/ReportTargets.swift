import Fluent
import Foundation
import NIOConcurrencyHelpers

/// What a report may name: deployments that have been activated, with their team, collection and
/// model names, cached (an activated deployment never changes) so the report route reads the
/// database once per deployment, not per request. A deployment that is unknown, a draft or
/// another team's is remembered as unknown for a minute; the stage each staged deployment is at is
/// kept here by ``RolloutGate``.
final class ReportTargets: Sendable {
    struct Target: Sendable {
        /// A model the deployment names, with the SHA-256s of every version of it it names (its
        /// default's and its rules').
        struct Model: Sendable {
            let name: String
            let digests: [ModelDigest]
        }

        let teamID: UUID
        let collection: String
        let models: [Model]

        /// The SHA-256s of model `name` (its bytes, not a canonically equivalent spelling, as the
        /// database compares them), or nil when the deployment has no such model.
        func digests(of name: String) -> [ModelDigest]? {
            models.first { $0.name.hasSameBytes(as: name) }?.digests
        }
    }

    private enum Entry {
        case known(Target)
        case unknown(until: Date)
    }

    /// The most deployments remembered, known and unknown together.
    let capacity: Int
    private let entries = NIOLockedValueBox<[UUID: Entry]>([:])
    private let stages = NIOLockedValueBox<[UUID: Int]>([:])

    init(capacity: Int = 20_000) { self.capacity = capacity }

    /// The deployment's target, or nil when no activated deployment has that ID. `db` is asked for
    /// only when the cache does not know the answer (a request's `db` makes a handle each time).
    func target(_ deploymentID: UUID, on db: @autoclosure () -> any Database, now: Date = Date()) async throws -> Target? {
        switch entries.withLockedValue({ $0[deploymentID] }) {
        case .known(let target): return target
        case .unknown(let until) where until > now: return nil
        default: break
        }
        var entry = Entry.unknown(until: now.addingTimeInterval(60))
        let db = db()
        if let deployment = try await DeploymentRecord.find(deploymentID, on: db), deployment.activatedAt != nil,
           let collection = try await CollectionRecord.find(deployment.$collection.id, on: db) {
            let versions = try await ModelVersionRecord.query(on: db).filter(\.$id ~~ deployment.spec.versionIDs).all()
            var digests: [String: [ModelDigest]] = [:]
            for version in versions {
                guard let digest = ModelDigest(hex: version.blobID) else { continue }
                digests[version.modelName, default: []].append(digest)
            }
            let names = Set(deployment.spec.defaults.keys).union(deployment.spec.rules.flatMap(\.models.keys))
            let models = names.sorted().map { Target.Model(name: $0, digests: digests[$0] ?? []) }
            entry = .known(Target(teamID: collection.$team.id, collection: collection.identifier, models: models))
        }
        entries.withLockedValue { entries in
            if entries.count >= capacity {
                // Made-up IDs are what fills the table (any credential can send them): the unknowns
                // go first, so a flood of them does not push every team's deployments out, each to
                // cost a query again. Half full of real ones, all go (never a scan per request).
                entries = entries.filter { if case .known = $0.value { true } else { false } }
                if entries.count >= capacity / 2 { entries.removeAll() }
            }
            entries[deploymentID] = entry
        }
        if case .known(let target) = entry { return target }
        return nil
    }

    /// The deployment's target when the cache knows it as activated; nil otherwise (unknown, or
    /// not asked yet: ``target(_:on:now:)`` decides). No database, no task.
    func cachedTarget(_ deploymentID: UUID) -> Target? {
        guard case .known(let target) = entries.withLockedValue({ $0[deploymentID] }) else { return nil }
        return target
    }

    /// The stage percent a deployment is at: its running rollout's, else 100.
    func stage(of deploymentID: UUID) -> Int { stages.withLockedValue { $0[deploymentID] } ?? 100 }

    /// Records the stages of the rollouts running now.
    func setStages(_ running: [UUID: Int]) { stages.withLockedValue { $0 = running } }
}
