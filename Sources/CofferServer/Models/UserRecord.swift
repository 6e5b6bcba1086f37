import Fluent
import Foundation

/// A person (or CI system) who holds API tokens and belongs to teams.
final class UserRecord: Model, @unchecked Sendable {
    static let schema = "users"

    @ID(key: .id) var id: UUID?
    @Field(key: "name") var name: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}

    init(name: String) {
        self.name = name
    }
}
