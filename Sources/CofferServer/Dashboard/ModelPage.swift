import CofferFormat
import Fluent
import Vapor

/// `GET …/collections/:collection/models/:model`: every version of one model name that was
/// uploaded to the collection, newest first — size, SHA-256, key, what is inside it (the facts
/// `coffer … --key` recorded, issue 8) — and which deployments name it.
struct ModelPage: Encodable, Sendable {
    let chrome: Chrome
    let team: String
    let identifier: String
    let collectionPath: String
    let model: String
    let versions: [DeploymentPage.Version]

    /// The page of model `model` of a collection (path components are percent-encoded).
    static func path(team: String, collection: String, model: String) -> String {
        CollectionPages.path(team: team, collection: collection) + "/models/" + CollectionPages.escape(model)
    }

    static func make(_ req: Request, team: TeamRecord, collection: CollectionRecord, model: String, store: any BlobStore) async throws -> ModelPage {
        let collectionID = try collection.requireID()
        let rows = try await ModelVersionRecord.query(on: req.db).filter(\.$collection.$id == collectionID)
            .filter(\.$modelName == model).sort(\.$createdAt, .descending).all()
        let reports = try await DeploymentView.facts(of: Set(rows.map(\.blobID)), team: try team.requireID(), on: req.db)
        let deployments = try await DeploymentRecord.query(on: req.db).filter(\.$collection.$id == collectionID)
            .sort(\.$createdAt, .descending).all()
        // What the headers say, each read once a while (``BlobStore/facts(of:)``); the chunk tables
        // of two neighbours are read whole only the first time their sharing is asked.
        var facts: [HeaderFacts?] = []
        for row in rows { facts.append(try? await store.facts(of: row.blobID)) }
        var sharings: [(shared: Int, total: Int)?] = []
        for (index, row) in rows.enumerated() {
            guard index + 1 < rows.count, ChunkSharing.comparable(facts[index], facts[index + 1]) else {
                sharings.append(nil)
                continue
            }
            let older = rows[index + 1].blobID
            sharings.append(try? await store.headerFacts.sharing(of: row.blobID, with: older) {
                guard let newer = try await store.header(of: row.blobID)?.header, let old = try await store.header(of: older)?.header else { return nil }
                return ChunkSharing.shared(newer, with: old)
            })
        }
        let versions = try rows.enumerated().map { index, row in
            let id = try row.requireID()
            var version = DeploymentPage.version(model, DeploymentView.Version(
                versionID: id, sha256: row.blobID, size: row.size, keyID: row.keyID, facts: reports[row.blobID]))
            version.note = "Uploaded \(CollectionPage.date(row.createdAt)) by \(row.createdBy). " + Self.uses(of: id, model: model, in: deployments, activeID: collection.activeDeploymentID)
            let previous = index + 1 < rows.count ? rows[index + 1] : nil
            version.chunks = ChunkSharing.describe(
                facts[index], previous: index + 1 < rows.count ? facts[index + 1] : nil, sharing: sharings[index],
                previousLabel: previous.map { "the previous version (\($0.blobID.prefix(12))…, \(CollectionPage.date($0.createdAt)))" } ?? "")
            return version
        }
        return ModelPage(chrome: try Chrome.make(req, title: model + " · " + collection.identifier), team: team.name,
                         identifier: collection.identifier, collectionPath: CollectionPages.path(team: team.name, collection: collection.identifier),
                         model: model, versions: versions)
    }

    /// "Named by spring (active), spring-tablets (rule 1)." or "No deployment names it."
    static func uses(of versionID: UUID, model: String, in deployments: [DeploymentRecord], activeID: UUID?) -> String {
        let uses: [String] = deployments.compactMap { deployment in
            var places: [String] = []
            if deployment.spec.defaults[model] == versionID { places.append("default") }
            for (index, rule) in deployment.spec.rules.enumerated() where rule.models[model] == versionID { places.append("rule \(index + 1)") }
            guard !places.isEmpty else { return nil }
            let active = deployment.id == activeID ? ", active" : ""
            return "\(deployment.name) (\(places.joined(separator: ", "))\(active))"
        }
        return uses.isEmpty ? "No deployment names it." : "Named by " + uses.joined(separator: "; ") + "."
    }
}

/// The route of ``ModelPage``.
struct ModelPageRoute: RouteCollection {
    let store: any BlobStore

    func boot(routes: any RoutesBuilder) throws {
        routes.get("dashboard", "teams", ":team", "collections", ":collection", "models", ":model", use: show)
    }

    func show(req: Request) async throws -> Response {
        let (team, collection) = try await req.collection(requiring: .viewer)
        let model = try req.parameters.require("model")
        guard collection.modelNames.contains(model) else { throw APIError.notFound("model \(model.prefix(100)) of this collection") }
        return try await req.page("model", try await ModelPage.make(req, team: team, collection: collection, model: model, store: store))
    }
}
