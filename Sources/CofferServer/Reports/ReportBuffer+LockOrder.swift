import Foundation

/// One order for the rows every instance writes to PostgreSQL, so that two instances flushing the
/// same (deployment, model, device) rows or (app, event ID) rows at once take their row locks in
/// the same order instead of each in its own `Dictionary` order (seeded per process), which made
/// their upserts deadlock each other (40P01: retried, then put back; the buffer grew to 503).
/// SQLite, with one writer at a time, needs no order.
extension ReportBuffer {
    /// Device rows in (deployment, model, device) order, names by their bytes. The indices are
    /// sorted, not the rows: moving rows (two Strings each) through the sort's merges was most of
    /// its cost, a third of the flush's own CPU in a profile at 30 000 new devices a second.
    static func lockOrdered(_ rows: [(key: DeviceKey, value: DeviceState)]) -> [(key: DeviceKey, value: DeviceState)] {
        rows.indices.sorted { precedes(rows[$0].key, rows[$1].key) }.map { rows[$0] }
    }

    /// Events in (app, event ID) order.
    static func lockOrdered(_ events: [Event]) -> [Event] {
        events.indices.sorted { left, right in
            let apps = compare(events[left].appID, events[right].appID)
            return apps != 0 ? apps < 0 : events[left].failure.eventID.compareBytes(with: events[right].failure.eventID) < 0
        }.map { events[$0] }
    }

    /// Whether `left` comes first. Names are compared by their bytes, as ``DeviceKey`` tells keys
    /// apart: `String`'s `<` holds canonically equivalent spellings equal, and two rows neither of
    /// which comes first could be written in either order.
    static func precedes(_ left: DeviceKey, _ right: DeviceKey) -> Bool {
        let deployments = compare(left.deploymentID, right.deploymentID)
        if deployments != 0 { return deployments < 0 }
        let models = left.model.compareBytes(with: right.model)
        if models != 0 { return models < 0 }
        return left.deviceID.compareBytes(with: right.deviceID) < 0
    }

    /// UUIDs by their bytes, without making text.
    static func compare(_ left: UUID, _ right: UUID) -> Int32 {
        withUnsafeBytes(of: left.uuid) { a in withUnsafeBytes(of: right.uuid) { b in memcmp(a.baseAddress!, b.baseAddress!, 16) } }
    }
}
