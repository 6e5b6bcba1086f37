import Fluent
import Vapor

/// What the new-deployment and clone pages show: an upload form per model name of the collection
/// (with a progress bar when scripts run), then the deployment's name, a model for each name
/// chosen among the uploaded versions, and the targeting rules as text.
///
/// A person's input comes back as it was typed when the form is refused, with the reason above it.
struct DeploymentFormPage: Encodable, Sendable {
    /// One model name: its upload form and its choice of uploaded versions.
    struct Slot: Encodable, Sendable {
        let index: Int
        let name: String
        let uploadPath: String
        let choices: [ModelChoice]
        let hasChoice: Bool
        /// Why this slot's last upload (without a script) was refused.
        let error: String?
    }
    /// A hidden field of the upload forms (the choices made so far, without a script).
    struct Hidden: Encodable, Sendable { let name: String; let value: String }

    let chrome: Chrome
    let team: String
    let identifier: String
    let collectionPath: String
    let action: String
    let heading: String
    let submitLabel: String
    let source: String?
    let from: String
    let name: String
    let rules: String
    let slots: [Slot]
    /// The first model name, for the rule examples.
    let firstModel: String
    let hidden: [Hidden]
    let error: String?
    let limit: String

    /// What a person typed (or, on first show, what the page starts with).
    struct Input {
        var name = ""
        var rules = ""
        /// Model name index → chosen SHA-256.
        var picks: [Int: String] = [:]
    }

    static func make(
        _ req: Request, team: TeamRecord, collection: CollectionRecord, source: DeploymentRecord?, input: Input,
        error: String?, maximumSize: Int64, uploadError: (index: Int, message: String)? = nil
    ) async throws -> DeploymentFormPage {
        let collectionPath = CollectionPages.path(team: team.name, collection: collection.identifier)
        let versions = try await ModelVersionRecord.query(on: req.db).filter(\.$collection.$id == collection.requireID())
            .sort(\.$createdAt, .descending).limit(1000).all()
        let from = try source.map { try $0.requireID().uuidString.lowercased() } ?? ""
        let slots = collection.modelNames.enumerated().map { index, name in
            let choices = versions.filter { $0.modelName == name }.map { ModelChoice($0, selected: $0.blobID == input.picks[index]) }
            return Slot(index: index, name: name, uploadPath: collectionPath + "/models/" + CollectionPages.escape(name),
                        choices: choices, hasChoice: choices.contains(where: \.selected),
                        error: uploadError?.index == index ? uploadError?.message : nil)
        }
        let heading = source.map { "Clone \($0.name)" } ?? "New deployment"
        return DeploymentFormPage(
            chrome: try Chrome.make(req, title: heading + " · " + collection.identifier), team: team.name, identifier: collection.identifier,
            collectionPath: collectionPath, action: collectionPath + "/deployments" + (source == nil ? "" : "/\(from)/clone"),
            heading: heading, submitLabel: source == nil ? "Create deployment" : "Create the clone", source: source?.name, from: from,
            name: input.name, rules: input.rules, slots: slots, firstModel: collection.modelNames.first ?? "Model",
            hidden: input.picks.sorted { $0.key < $1.key }.map { Hidden(name: "pick-\($0.key)", value: $0.value) },
            error: error, limit: CollectionPage.size(maximumSize))
    }

    /// The choices carried by `fields` (`pick-N` = SHA-256), sound ones only.
    static func picks(_ fields: [String: String]) -> [Int: String] {
        var picks: [Int: String] = [:]
        for (key, value) in fields where key.hasPrefix("pick-") {
            if let index = Int(key.dropFirst(5)), (0..<1000).contains(index), BlobAddress.isValid(value) { picks[index] = value }
        }
        return picks
    }

    /// The page to go back to after an upload without a script: the new-deployment page, or the
    /// clone page of `from` (a deployment ID), with the choices so far.
    static func formPath(team: String, collection: String, from: String?, picks: [Int: String]) -> String {
        var path = CollectionPages.path(team: team, collection: collection) + "/deployments/"
        if let from, let id = UUID(uuidString: from) { path += id.uuidString.lowercased() + "/clone" } else { path += "new" }
        let query = picks.sorted { $0.key < $1.key }.map { "pick-\($0.key)=\($0.value)" }.joined(separator: "&")
        return query.isEmpty ? path : path + "?" + query
    }
}
