import Fluent
import Foundation

/// A team's model collection: an identifier (e.g. `FlowerModels`), the model names it holds, and
/// which deployment devices get now.
final class CollectionRecord: Model, @unchecked Sendable {
    static let schema = "collections"

    @ID(key: .id) var id: UUID?
    @Parent(key: "team_id") var team: TeamRecord
    @Field(key: "identifier") var identifier: String
    @Field(key: "description") var description: String
    @Field(key: "model_names") var modelNames: [String]
    /// Grows by one with every activation (a rollback too); signed into every manifest.
    @Field(key: "sequence") var sequence: Int64
    /// The one active deployment, if any; changed only by ``Activation``.
    @OptionalField(key: "active_deployment_id") var activeDeploymentID: UUID?
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(teamID: UUID, identifier: String, description: String, modelNames: [String]) {
        self.$team.id = teamID
        self.identifier = identifier
        self.description = description
        self.modelNames = modelNames
        self.sequence = 0
    }
}
