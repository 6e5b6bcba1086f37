import Fluent
import Foundation

/// How many downloads of one blob, or deliveries of one model key, happened on one UTC day,
/// summed over every server instance (``UsageCounter`` adds to it).
final class UsageDailyRecord: Model, @unchecked Sendable {
    static let schema = "usage_daily"

    @ID(key: .id) var id: UUID?
    /// The UTC day, `YYYY-MM-DD`.
    @Field(key: "day") var day: String
    /// A ``UsageKind`` raw value.
    @Field(key: "kind") var kind: String
    /// The blob address (downloads) or the key ID (deliveries).
    @Field(key: "subject") var subject: String
    @Field(key: "count") var count: Int64

    init() {}
}
