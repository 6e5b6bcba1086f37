import Fluent
import Foundation

/// A team: owns apps, model keys and (later) collections.
final class TeamRecord: Model, @unchecked Sendable {
    static let schema = "teams"

    @ID(key: .id) var id: UUID?
    @Field(key: "name") var name: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(name: String) {
        self.name = name
    }
}
