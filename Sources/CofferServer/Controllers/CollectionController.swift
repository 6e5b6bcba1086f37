import Fluent
import Vapor

/// `/v1/teams/:team/collections`: a team's model collections and their model names.
/// `GET /v1/collections` lists the collections of every team of the caller (so the CLI can find a
/// collection's team when the identifier alone is unambiguous).
struct CollectionController: RouteCollection {
    struct CreateCollection: Content { let identifier: String; let description: String?; let models: [String] }
    struct AddModel: Content { let name: String }
    struct CollectionView: Content {
        let id: UUID; let identifier: String; let team: String; let description: String; let models: [String]
        let sequence: Int64; let activeDeploymentID: UUID?; let createdAt: Date?
    }

    static let maximumModels = 100

    func boot(routes: any RoutesBuilder) throws {
        routes.get("v1", "collections", use: listAll)
        let collections = routes.grouped("v1", "teams", ":team", "collections")
        collections.post(use: create)
        collections.get(use: list)
        collections.get(":collection", use: show)
        collections.post(":collection", "models", use: addModel)
        collections.delete(":collection", "models", ":model", use: removeModel)
    }

    func create(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .developer)
        let body = try req.content.decode(CreateCollection.self)
        let collection = try await Self.create(body, in: team, actor: try req.user().name, on: req.db)
        return try await Self.view(collection, team: team).encodeResponse(status: .created, for: req)
    }

    /// Validates and stores a new collection of `team`, and audits it: the API's and the
    /// dashboard's one way to create a collection.
    static func create(_ body: CreateCollection, in team: TeamRecord, actor: String, on db: any Database) async throws -> CollectionRecord {
        try Self.validateIdentifier(body.identifier)
        let description = body.description ?? ""
        guard description.count <= 1000 else { throw APIError.invalid("the description is limited to 1000 characters") }
        guard (1...Self.maximumModels).contains(body.models.count) else {
            throw APIError.invalid("a collection holds 1 to \(Self.maximumModels) model names")
        }
        for name in body.models { try Names.validate(name, what: "model name") }
        guard Set(body.models).count == body.models.count else { throw APIError.invalid("model names must differ") }
        let teamID = try team.requireID()
        if try await CollectionRecord.query(on: db).filter(\.$team.$id == teamID).filter(\.$identifier == body.identifier).first() != nil {
            throw APIError.conflict("team \(team.name) already has a collection \(body.identifier)")
        }
        let collection = CollectionRecord(teamID: teamID, identifier: body.identifier, description: description, modelNames: body.models)
        // Two creations can pass the check above together: the unique constraint decides.
        try await UniqueViolation.asConflict("team \(team.name) already has a collection \(body.identifier)") {
            try await db.transaction { db in
                try await collection.create(on: db)
                try await Audit.record(on: db, teamID: teamID, action: "collection.create", actor: actor, target: body.identifier, outcome: "ok")
            }
        }
        return collection
    }

    func list(req: Request) async throws -> [CollectionView] {
        let (team, _) = try await req.team(requiring: .viewer)
        return try await CollectionRecord.query(on: req.db).filter(\.$team.$id == team.requireID()).sort(\.$identifier).all()
            .map { Self.view($0, team: team) }
    }

    func listAll(req: Request) async throws -> [CollectionView] {
        let user = try req.user()
        let memberships = try await MembershipRecord.query(on: req.db).filter(\.$user.$id == user.userID).with(\.$team).all()
        var views: [CollectionView] = []
        for membership in memberships {
            let team = membership.team
            views += try await CollectionRecord.query(on: req.db).filter(\.$team.$id == team.requireID()).sort(\.$identifier).all()
                .map { Self.view($0, team: team) }
        }
        return views
    }

    func show(req: Request) async throws -> CollectionView {
        let (team, collection) = try await req.collection(requiring: .viewer)
        return Self.view(collection, team: team)
    }

    func addModel(req: Request) async throws -> CollectionView {
        let (team, found) = try await req.collection(requiring: .developer)
        let body = try req.content.decode(AddModel.self)
        try Names.validate(body.name, what: "model name")
        let actor = try req.user().name, collectionID = try found.requireID(), teamID = team.id
        // Read, changed and written under the collection's lock: two additions at once both land.
        let collection = try await req.db.writeTransaction { tx in
            let collection = try await Self.locked(collectionID, on: tx)
            guard !collection.modelNames.contains(body.name) else { throw APIError.conflict("\(collection.identifier) already has a model \(body.name)") }
            guard collection.modelNames.count < Self.maximumModels else { throw APIError.invalid("a collection holds at most \(Self.maximumModels) model names") }
            collection.modelNames.append(body.name)
            try await collection.update(on: tx)
            try await Audit.record(on: tx, teamID: teamID, action: "collection.add-model", actor: actor,
                                   target: "\(collection.identifier)/\(body.name)", outcome: "ok")
            return collection
        }
        return Self.view(collection, team: team)
    }

    func removeModel(req: Request) async throws -> CollectionView {
        let (team, found) = try await req.collection(requiring: .developer)
        let name = req.parameters.get("model") ?? ""
        let actor = try req.user().name, collectionID = try found.requireID(), teamID = team.id
        // Under the lock activations take: a deployment using the name cannot be activated
        // between the check and the removal.
        let collection = try await req.db.writeTransaction { tx in
            let collection = try await Self.locked(collectionID, on: tx)
            guard collection.modelNames.contains(name) else { throw APIError.notFound("model name") }
            if let activeID = collection.activeDeploymentID, let active = try await DeploymentRecord.find(activeID, on: tx) {
                let used = Set(active.spec.defaults.keys).union(active.spec.rules.flatMap(\.models.keys))
                if used.contains(name) {
                    throw APIError.conflict("the active deployment \(active.name) uses \(name); activate one without it first")
                }
            }
            guard collection.modelNames.count > 1 else { throw APIError.conflict("a collection keeps at least one model name") }
            collection.modelNames.removeAll { $0 == name }
            try await collection.update(on: tx)
            try await Audit.record(on: tx, teamID: teamID, action: "collection.remove-model", actor: actor,
                                   target: "\(collection.identifier)/\(name)", outcome: "ok")
            return collection
        }
        return Self.view(collection, team: team)
    }

    /// The collection `id`, read after taking its lock (``Rollouts/activeDeployment(of:lockingOn:)``).
    private static func locked(_ id: UUID, on tx: any Database) async throws -> CollectionRecord {
        _ = try await Rollouts.activeDeployment(of: id, lockingOn: tx)
        guard let collection = try await CollectionRecord.find(id, on: tx) else { throw APIError.notFound("collection") }
        return collection
    }

    /// A byte a collection identifier may hold: an ASCII letter or digit, `.`, `_` or `-`.
    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "-")
    }

    /// Identifiers are what apps name in code: letters, digits, `.`, `_` and `-`, 1 to 100.
    static func validateIdentifier(_ identifier: String) throws {
        // ASCII only, so bytes and characters count alike.
        let allowed = identifier.utf8.allSatisfy(isIdentifierByte)
        guard (1...100).contains(identifier.utf8.count), allowed, identifier != ".", identifier != ".." else {
            throw APIError.invalid("a collection identifier is 1 to 100 ASCII letters, digits, '.', '_' or '-'")
        }
    }

    static func view(_ collection: CollectionRecord, team: TeamRecord) -> CollectionView {
        CollectionView(id: collection.id ?? UUID(), identifier: collection.identifier, team: team.name, description: collection.description,
                       models: collection.modelNames, sequence: collection.sequence,
                       activeDeploymentID: collection.activeDeploymentID, createdAt: collection.createdAt)
    }
}

extension Request {
    /// The team and collection named by the `team` and `collection` path parameters, if the user
    /// has at least `role` in the team; 404 when the collection does not exist.
    func collection(requiring role: Role) async throws -> (TeamRecord, CollectionRecord) {
        let (team, _) = try await team(requiring: role)
        guard let identifier = parameters.get("collection"),
              let collection = try await CollectionRecord.query(on: db)
                .filter(\.$team.$id == team.requireID()).filter(\.$identifier == identifier).first()
        else { throw APIError.notFound("collection") }
        return (team, collection)
    }
}
