import Fluent
import Foundation

/// One audited event: who did what to what, when, and how it ended. Never holds a secret.
final class AuditRecord: Model, @unchecked Sendable {
    static let schema = "audit_events"

    @ID(key: .id) var id: UUID?
    @OptionalField(key: "team_id") var teamID: UUID?
    @Field(key: "action") var action: String
    @Field(key: "actor") var actor: String
    @Field(key: "target") var target: String
    @Field(key: "outcome") var outcome: String
    @OptionalField(key: "reason") var reason: String?
    @OptionalField(key: "device_id") var deviceID: String?
    @Timestamp(key: "at", on: .create) var at: Date?
    /// How many identical events this row stands for (``RefusalLog``); nil for one.
    @OptionalField(key: "repeat_count") var repeatCount: Int64?

    init() {}

    init(teamID: UUID?, action: String, actor: String, target: String, outcome: String, reason: String?, deviceID: String?) {
        self.teamID = teamID
        self.action = action
        self.actor = actor
        self.target = target
        self.outcome = outcome
        self.reason = reason
        self.deviceID = deviceID
    }
}
