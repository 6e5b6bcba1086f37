import Foundation

/// One order for the rows every instance writes to PostgreSQL, so that two instances flushing the
/// same (deployment, model, device) rows or (app, event ID) rows at once take their row locks in
/// the same order instead of each in its own `Dictionary` order (seeded per process), which made
/// their upserts deadlock each other (40P01: retried, then put back; the buffer grew to 503).
/// SQLite, with one writer at a time, needs no order.
extension ReportBuffer {
    /// Device rows in (deployment, model, device) order.
    static func lockOrdered(_ rows: [(key: DeviceKey, value: DeviceState)]) -> [(key: DeviceKey, value: DeviceState)] {
        rows.sorted { precedes($0.key, $1.key) }
    }

    /// Events in (app, event ID) order.
    static func lockOrdered(_ events: [Event]) -> [Event] {
        events.sorted { left, right in
            let apps = compare(left.appID, right.appID)
            return apps != 0 ? apps < 0 : left.failure.eventID < right.failure.eventID
        }
    }

    static func precedes(_ left: DeviceKey, _ right: DeviceKey) -> Bool {
        let deployments = compare(left.deploymentID, right.deploymentID)
        if deployments != 0 { return deployments < 0 }
        if left.model != right.model { return left.model < right.model }
        return left.deviceID < right.deviceID
    }

    /// UUIDs by their bytes, without making text.
    static func compare(_ left: UUID, _ right: UUID) -> Int32 {
        withUnsafeBytes(of: left.uuid) { a in withUnsafeBytes(of: right.uuid) { b in memcmp(a.baseAddress!, b.baseAddress!, 16) } }
    }
}
