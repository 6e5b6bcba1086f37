import CofferFormat
import Crypto
import Fluent
import Vapor

/// `/v1/teams/:team/collections/:collection/deployments`: create, edit (drafts), clone, activate,
/// archive and roll back deployments; the collection's activation history.
struct DeploymentController: RouteCollection {
    struct ActivationView: Content {
        let sequence: Int64; let deploymentID: UUID; let deploymentName: String; let kind: String; let actor: String; let at: Date?
    }

    let store: any BlobStore
    let manifests: ManifestService
    let gate: RolloutGate

    func boot(routes: any RoutesBuilder) throws {
        let collection = routes.grouped("v1", "teams", ":team", "collections", ":collection")
        let deployments = collection.grouped("deployments")
        deployments.post(use: create)
        deployments.get(use: list)
        deployments.get(":deployment", use: show)
        deployments.patch(":deployment", use: edit)
        deployments.post(":deployment", "clone", use: clone)
        deployments.post(":deployment", "activate", use: activate)
        deployments.post(":deployment", "archive", use: archive)
        deployments.post(":deployment", "advance", use: advance)
        deployments.post(":deployment", "halt", use: halt)
        deployments.get(":deployment", "status", use: status)
        collection.post("rollback", use: rollback)
        collection.get("activations", use: history)
    }

    func create(req: Request) async throws -> Response {
        let (team, collection) = try await req.collection(requiring: .developer)
        let deployment = try await create(req, team: team, collection: collection, input: try req.content.decode(DeploymentInput.self))
        return try await DeploymentView.make(deployment, in: collection, store: store, on: req.db).encodeResponse(status: .created, for: req)
    }

    /// Creates a draft deployment of `collection` from `input` (the API's and the dashboard's forms
    /// both come here): validated, saved, audited.
    func create(_ req: Request, team: TeamRecord, collection: CollectionRecord, input: DeploymentInput) async throws -> DeploymentRecord {
        guard let name = input.name else { throw APIError.invalid("a deployment needs a name") }
        let seed = SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }.hexString
        let deployment = try await save(req, collection: collection, name: name, seed: seed, base: DeploymentSpec(defaults: [:], rules: []), input: input)
        try await Audit.record(on: req.db, teamID: team.id, action: "deployment.create", actor: try req.user().name,
                               target: "\(collection.identifier)/\(name)", outcome: "ok")
        return deployment
    }

    func list(req: Request) async throws -> [DeploymentView] {
        let (_, collection) = try await req.collection(requiring: .viewer)
        let deployments = try await DeploymentRecord.query(on: req.db).filter(\.$collection.$id == collection.requireID()).sort(\.$createdAt).all()
        var views: [DeploymentView] = []
        for deployment in deployments { views.append(try await DeploymentView.make(deployment, in: collection, store: store, on: req.db)) }
        return views
    }

    func show(req: Request) async throws -> DeploymentView {
        let (_, collection, deployment) = try await Self.deployment(req, requiring: .viewer)
        return try await DeploymentView.make(deployment, in: collection, store: store, on: req.db)
    }

    func edit(req: Request) async throws -> DeploymentView {
        let (team, collection, deployment) = try await Self.deployment(req, requiring: .developer)
        guard deployment.status == .draft else {
            throw APIError.conflict("deployment \(deployment.name) is \(deployment.status.rawValue); only drafts change (clone it)")
        }
        let input = try req.content.decode(DeploymentInput.self)
        let saved = try await save(req, collection: collection, name: input.name ?? deployment.name, seed: deployment.rolloutSeed,
                                   base: deployment.spec, input: input, into: deployment)
        try await Audit.record(on: req.db, teamID: team.id, action: "deployment.edit", actor: try req.user().name,
                               target: "\(collection.identifier)/\(saved.name)", outcome: "ok")
        return try await DeploymentView.make(saved, in: collection, store: store, on: req.db)
    }

    func clone(req: Request) async throws -> Response {
        let (team, collection, source) = try await Self.deployment(req, requiring: .developer)
        let deployment = try await clone(req, team: team, collection: collection, source: source, input: try req.content.decode(DeploymentInput.self))
        return try await DeploymentView.make(deployment, in: collection, store: store, on: req.db).encodeResponse(status: .created, for: req)
    }

    /// Saves a new draft that starts as a copy of `source` (same rollout seed, so rollout buckets
    /// stay put) with `input`'s changes.
    func clone(_ req: Request, team: TeamRecord, collection: CollectionRecord, source: DeploymentRecord, input: DeploymentInput) async throws -> DeploymentRecord {
        guard let name = input.name else { throw APIError.invalid("the clone needs a name") }
        let deployment = try await save(req, collection: collection, name: name, seed: source.rolloutSeed, base: source.spec, input: input)
        try await Audit.record(on: req.db, teamID: team.id, action: "deployment.clone", actor: try req.user().name,
                               target: "\(collection.identifier)/\(source.name) -> \(name)", outcome: "ok")
        return deployment
    }

    /// Activates a deployment: at once for every device, or, with a JSON body that names stages
    /// (``ActivationOptions``), stage by stage (docs/ROLLOUTS.md).
    func activate(req: Request) async throws -> DeploymentView {
        // A body is always read (an unsupported content type is 415): stages sent in a form the
        // route did not read must never become an activation for every device.
        let options = (req.body.data?.readableBytes ?? 0) > 0 ? try req.content.decode(ActivationOptions.self) : ActivationOptions()
        return try await activate(req, options: options)
    }

    /// Activates the request's deployment with `options` (the dashboard's form comes here too).
    func activate(_ req: Request, options: ActivationOptions) async throws -> DeploymentView {
        let (team, collection, deployment) = try await Self.deployment(req, requiring: .developer)
        guard let plan = try options.plan() else {
            return try await activate(req, team: team, collection: collection, deployment: deployment, kind: "activate")
        }
        return try await stage(req, team: team, collection: collection, deployment: deployment, plan: plan)
    }

    /// Moves a staged rollout to its next stage by hand (its gates do not apply).
    func advance(req: Request) async throws -> DeploymentView {
        let (_, collection, deployment) = try await Self.deployment(req, requiring: .developer)
        guard let rollout = try await Rollouts.running(try deployment.requireID(), on: req.db) else {
            throw APIError.conflict("deployment \(deployment.name) has no staged rollout running")
        }
        guard try await gate.advance(rollout, actor: try req.user().name, at: Date(), on: req.db) != nil else {
            throw APIError.conflict("the rollout changed meanwhile; look at its status and try again")
        }
        return try await DeploymentView.make(deployment, in: collection, store: store, on: req.db)
    }

    /// Halts a staged rollout by hand: every device gets the previous deployment again.
    func halt(req: Request) async throws -> DeploymentView {
        struct HaltInput: Content { var reason: String? }
        let (_, collection, deployment) = try await Self.deployment(req, requiring: .developer)
        let input = (req.body.data?.readableBytes ?? 0) > 0 ? try req.content.decode(HaltInput.self) : HaltInput()
        let user = try req.user()
        let given = input.reason?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard given.utf8.count <= 200, TargetingText.firstForbidden(in: given) == nil else {
            throw APIError.invalid("a halt's reason is at most 200 bytes on one line, without control or format characters")
        }
        guard let rollout = try await Rollouts.running(try deployment.requireID(), on: req.db) else {
            throw APIError.conflict("deployment \(deployment.name) has no staged rollout running")
        }
        let reason = "by \(user.name)" + (given.isEmpty ? "" : ": \(given)")
        guard try await gate.halt(rollout, reason: reason, actor: user.name, at: Date(), on: req.db) != nil else {
            throw APIError.conflict("the rollout changed meanwhile; look at its status and try again")
        }
        guard let halted = try await DeploymentRecord.find(deployment.id, on: req.db) else { throw APIError.notFound("deployment") }
        return try await DeploymentView.make(halted, in: collection, store: store, on: req.db)
    }

    /// Where the deployment's rollout stands and how its devices fare.
    func status(req: Request) async throws -> DeploymentStatus {
        let (_, _, deployment) = try await Self.deployment(req, requiring: .viewer)
        return try await DeploymentStatus.make(deployment, on: req.db)
    }

    func archive(req: Request) async throws -> DeploymentView {
        let (team, collection, deployment) = try await Self.deployment(req, requiring: .developer)
        let collectionID = try collection.requireID()
        // Under the collection's lock, as activations take it: one that ran since the read above
        // must not end with its active deployment archived.
        let archived = try await req.db.writeTransaction { tx in
            _ = try await Rollouts.activeDeployment(of: collectionID, lockingOn: tx)
            guard let current = try await DeploymentRecord.find(deployment.id, on: tx) else { throw APIError.notFound("deployment") }
            guard current.status != .active else {
                throw APIError.conflict("deployment \(deployment.name) is active; activate another one first")
            }
            current.status = .archived
            try await current.update(on: tx)
            return current
        }
        try await Audit.record(on: req.db, teamID: team.id, action: "deployment.archive", actor: try req.user().name,
                               target: "\(collection.identifier)/\(archived.name)", outcome: "ok")
        return try await DeploymentView.make(archived, in: collection, store: store, on: req.db)
    }

    /// Re-activates the deployment that was active before the current one: the newest other one
    /// that every device had. A stage short of 100 % does not count (a halted rollout's deployment
    /// is the one the gate stopped; rolling back to it would send it to every device).
    func rollback(req: Request) async throws -> DeploymentView {
        let (team, collection) = try await req.collection(requiring: .developer)
        guard let current = collection.activeDeploymentID else { throw APIError.conflict("\(collection.identifier) has no active deployment") }
        let earlier = try await ActivationRecord.query(on: req.db)
            .filter(\.$collection.$id == collection.requireID()).filter(\.$deployment.$id != current)
            .sort(\.$sequence, .descending).limit(1000).all()
        guard let previous = earlier.first(where: { !Rollouts.isPartialStage($0.kind) }),
              let deployment = try await DeploymentRecord.find(previous.$deployment.id, on: req.db)
        else { throw APIError.conflict("\(collection.identifier) has no earlier deployment to roll back to") }
        return try await activate(req, team: team, collection: collection, deployment: deployment, kind: "rollback")
    }

    func history(req: Request) async throws -> [ActivationView] {
        let (_, collection) = try await req.collection(requiring: .viewer)
        let rows = try await ActivationRecord.query(on: req.db).filter(\.$collection.$id == collection.requireID())
            .with(\.$deployment).sort(\.$sequence, .descending).limit(1000).all()
        return rows.map {
            ActivationView(sequence: $0.sequence, deploymentID: $0.$deployment.id, deploymentName: $0.deployment.name,
                           kind: $0.kind, actor: $0.actor, at: $0.at)
        }
    }

    // MARK: - Shared steps

    private func activate(_ req: Request, team: TeamRecord, collection: CollectionRecord, deployment: DeploymentRecord, kind: String) async throws -> DeploymentView {
        let user = try req.user()
        let before = try await DeploymentView.make(deployment, in: collection, store: store, fresh: true, on: req.db)
        if deployment.status == .active, collection.activeDeploymentID == deployment.id,
           try await Rollouts.running(try deployment.requireID(), on: req.db) == nil {
            return before  // already what every device gets: no new sequence number, no history entry
        }
        // Active but staged: activating it plainly ends the rollout and gives it to every device.
        guard before.problems.isEmpty else {
            throw APIError(.conflict, "not_ready", "deployment \(deployment.name) cannot be activated: \(before.problems.joined(separator: "; "))")
        }
        let now = Date()
        let sequence = try await Activation.activate(try deployment.requireID(), in: try collection.requireID(), kind: kind,
                                                     actor: user.name, at: now, checked: deployment.spec, on: req.db)
        manifests.invalidate(try collection.requireID())
        try await Audit.record(on: req.db, teamID: team.id, action: "deployment.\(kind)", actor: user.name,
                               target: "\(collection.identifier)/\(deployment.name) #\(sequence)", outcome: "ok")
        // The view checked above, as the activation left it: no second read of the blobs and keys.
        var activated = before
        activated.status = DeploymentRecord.Status.active.rawValue
        activated.activatedAt = now
        return activated
    }

    private func stage(_ req: Request, team: TeamRecord, collection: CollectionRecord, deployment: DeploymentRecord,
                       plan: RolloutPlan) async throws -> DeploymentView {
        let user = try req.user()
        let before = try await DeploymentView.make(deployment, in: collection, store: store, fresh: true, on: req.db)
        guard before.problems.isEmpty else {
            throw APIError(.conflict, "not_ready", "deployment \(deployment.name) cannot be activated: \(before.problems.joined(separator: "; "))")
        }
        let change = try await Rollouts.start(try deployment.requireID(), in: try collection.requireID(), plan: plan, actor: user.name,
                                              at: Date(), checked: deployment.spec, on: req.db)
        manifests.invalidate(change.collectionID)
        try await Audit.record(on: req.db, teamID: team.id, action: "deployment.stage", actor: user.name,
                               target: "\(collection.identifier)/\(deployment.name) #\(change.sequence)", outcome: "ok",
                               reason: "stages " + plan.stages.map(String.init).joined(separator: ","))
        guard let staged = try await DeploymentRecord.find(deployment.id, on: req.db) else { throw APIError.notFound("deployment") }
        return try await DeploymentView.make(staged, in: collection, store: store, on: req.db)
    }

    /// Validates `input` over `base` and stores the result (a new draft, or `existing`), with the
    /// blob references that keep its models from being collected.
    private func save(
        _ req: Request, collection: CollectionRecord, name: String, seed: String, base: DeploymentSpec,
        input: DeploymentInput, into existing: DeploymentRecord? = nil
    ) async throws -> DeploymentRecord {
        try Names.validate(name, what: "deployment name")
        let actor = try req.user().name
        let rules = try input.parsedRules()
        return try await req.db.writeTransaction { db in
            let collectionID = try collection.requireID()
            // The models first: resolving them reads their headers from the store, which must not
            // happen under the collection's lock (a halt or an activation would wait for it).
            let versions = ModelVersions(collection: collection, store: store, actor: actor, database: db)
            var models: [String: UUID]?
            if let named = input.models { models = try await versions.resolve(named) }
            var resolvedRules: [DeploymentSpec.Rule]?
            if let rules {
                var resolved: [DeploymentSpec.Rule] = []
                for (index, rule) in rules.enumerated() {
                    guard !rule.models.isEmpty else { throw APIError(.unprocessableEntity, "invalid_rule", "rule \(index + 1) names no models") }
                    resolved.append(.init(condition: rule.condition.text, models: try await versions.resolve(rule.models)))
                }
                resolvedRules = resolved
            }
            // An edit reads its draft again under the collection's lock, as activations take it: a
            // draft activated since the request read it is no draft any more (its models must not
            // change under its sequence number), and an edit saved meanwhile (models, name) is the
            // base of this one.
            var current: DeploymentRecord?
            var name = name
            if let existing {
                _ = try await Rollouts.activeDeployment(of: collectionID, lockingOn: db)
                guard let fresh = try await DeploymentRecord.find(existing.id, on: db), fresh.status == .draft else {
                    throw APIError.conflict("deployment \(existing.name) is no longer a draft; only drafts change (clone it)")
                }
                current = fresh
                if input.name == nil { name = fresh.name }
            }
            if let clash = try await DeploymentRecord.query(on: db).filter(\.$collection.$id == collectionID).filter(\.$name == name).first(),
               clash.id != existing?.id {
                throw APIError.conflict("\(collection.identifier) already has a deployment named \(name)")
            }
            var spec = current?.spec ?? base
            if let models { spec.defaults.merge(models) { $1 } }
            if let resolvedRules { spec.rules = resolvedRules }
            let deployment = current ?? DeploymentRecord(collectionID: collectionID, name: name, rolloutSeed: seed, spec: spec, createdBy: actor)
            deployment.name = name
            deployment.spec = spec
            try await deployment.save(on: db)
            let holder = "deployment:\(try deployment.requireID())"
            try await BlobReferenceRecord.query(on: db).filter(\.$holder == holder).delete()
            let blobs = Set(try await DeploymentView.versions(spec.versionIDs, on: db).values.map(\.blobID))
            for blob in blobs { try await BlobReferenceRecord(blobID: blob, holder: holder).create(on: db) }
            return deployment
        }
    }

    static func deployment(_ req: Request, requiring role: Role) async throws -> (TeamRecord, CollectionRecord, DeploymentRecord) {
        let (team, collection) = try await req.collection(requiring: role)
        guard let id = req.parameters.get("deployment", as: UUID.self),
              let deployment = try await DeploymentRecord.query(on: req.db)
                .filter(\.$id == id).filter(\.$collection.$id == collection.requireID()).first()
        else { throw APIError.notFound("deployment") }
        return (team, collection, deployment)
    }
}
