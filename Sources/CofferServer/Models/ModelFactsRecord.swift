import Fluent
import Foundation
import ModelInspection

/// What a team reported is inside one of its sealed models: a ``ModelReport`` as canonical JSON.
final class ModelFactsRecord: Model, @unchecked Sendable {
    static let schema = "model_facts"

    @ID(key: .id) var id: UUID?
    @Parent(key: "team_id") var team: TeamRecord
    /// The blob's address.
    @Field(key: "blob_id") var blobID: String
    /// The report, re-encoded by the server after it decoded and checked it.
    @Field(key: "facts") var facts: String
    @Timestamp(key: "updated_at", on: .update) var updatedAt: Date?

    init() {}

    init(teamID: UUID, blobID: String, facts: String) {
        self.$team.id = teamID
        self.blobID = blobID
        self.facts = facts
    }

    /// The stored report (nil if it no longer decodes, which only a database edit could cause).
    var report: ModelReport? { try? JSONDecoder().decode(ModelReport.self, from: Data(facts.utf8)) }
}
