import Foundation

/// One device report, checked (``ReportBatch/reports(now:appID:)``): every field within its bounds.
struct DeviceReport: Sendable {
    /// What a failure report keeps besides its counts (`report_events`).
    struct Failure: Sendable {
        let eventID: String
        let reason: String?
    }

    /// The event ID, as the idempotency sets remember it (the ID itself is kept only for a failure).
    let eventKey: ReportEventKey
    let deviceID: String
    let collection: String
    let sequence: Int64
    let deploymentID: UUID
    let model: String
    /// The SHA-256 of the model the device has: one of the deployment's versions of `model`.
    let sha256: ModelDigest
    let outcome: ReportOutcome
    /// Set for a failed outcome.
    let failure: Failure?
    let at: Date
}

/// The body of `POST /v1/device/reports` as sent (read by ``ReportBatchReader``): at most
/// ``maximumEvents`` events. Nothing of it is used before ``reports(now:appID:)`` has checked every event.
struct ReportBatch: Sendable {
    /// One event as sent: where its strings are in ``ReportBatch/bytes``, read by
    /// ``ReportBatch/Event/checked(in:now:appID:previous:)``. Plain values only (no reference).
    struct Event: Sendable {
        let id: ReportText
        let deviceID: ReportText
        let collection: ReportText
        let sequence: Int64
        let deployment: ReportText
        let model: ReportText
        let sha256: ReportText
        let outcome: ReportText
        let reason: ReportText?
        let at: ReportText
    }

    static let maximumEvents = 100
    /// The most bytes of a failure reason.
    static let maximumReason = 200
    /// How far back an event's time may be (the SDK drops what it could not send in a week).
    static let oldest: TimeInterval = 7 * 86_400
    /// How far ahead of the server's clock an event's time may be.
    static let newest: TimeInterval = 3600

    /// The body, followed by the unescaped bytes of any string that had escapes.
    let bytes: [UInt8]
    let events: [Event]

    /// The text of `text`, one of this batch's.
    func string(_ text: ReportText) -> String {
        bytes.withUnsafeBufferPointer { text.string(in: $0) }
    }

    /// The events of app `appID`, checked; the error names the first event (by index) and field
    /// that is not valid.
    func reports(now: Date, appID: UUID) throws(ReportFieldError) -> [DeviceReport] {
        guard (1...Self.maximumEvents).contains(events.count) else {
            throw ReportFieldError("a report batch holds 1 to \(Self.maximumEvents) events")
        }
        return try bytes.withUnsafeBufferPointer { (bytes) throws(ReportFieldError) -> [DeviceReport] in
            var reports: [DeviceReport] = []
            reports.reserveCapacity(events.count)
            var previous = ReportBatch.Event.Previous(appID: appID)
            for index in events.indices {
                do throws(ReportFieldError) {
                    reports.append(try events[index].checked(in: bytes, now: now, appID: appID, previous: &previous))
                } catch {
                    throw ReportFieldError("event \(index): \(error.reason)")
                }
            }
            return reports
        }
    }
}

/// Why one field of an event is not valid.
struct ReportFieldError: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

extension ReportBatch.Event {
    /// The previous event's strings and deployment: the events of a batch are usually one
    /// device's, for one collection, one deployment and a model or two, and a string equal to the
    /// one before is not made (nor a deployment ID read) again.
    struct Previous {
        var deviceID: String?
        var collection: String?
        var model: String?
        /// The last deployment ID read, and where its text is in the batch's bytes.
        var deployment: (text: ReportText, id: UUID)?
        /// The last SHA-256 read, and where its text is in the batch's bytes.
        var digest: (text: ReportText, digest: ModelDigest)?
        /// The app's event keys as far as the app ID (``ReportEventKey/Prefix``), made once a batch.
        let keys: ReportEventKey.Prefix

        init(appID: UUID) {
            keys = ReportEventKey.Prefix(appID: appID)
        }

        /// Whether `text` and `other` (both in `bytes`) are the same bytes.
        private static func same(_ text: ReportText, _ other: ReportText, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            text.count == other.count && (text.count == 0 || memcmp(text.bytes(in: bytes).baseAddress!, other.bytes(in: bytes).baseAddress!, text.count) == 0)
        }

        /// The deployment ID `text` (in `bytes`) gives, or nil when it is not a UUID.
        mutating func deploymentID(_ text: ReportText, in bytes: UnsafeBufferPointer<UInt8>) -> UUID? {
            if let deployment, Self.same(deployment.text, text, in: bytes) { return deployment.id }
            guard let id = UUID(hexBytes: text.bytes(in: bytes)) else { return nil }
            deployment = (text, id)
            return id
        }

        /// The SHA-256 `text` (in `bytes`) gives, or nil when it is not 64 lowercase hex digits.
        mutating func digest(_ text: ReportText, in bytes: UnsafeBufferPointer<UInt8>) -> ModelDigest? {
            if let digest, Self.same(digest.text, text, in: bytes) { return digest.digest }
            guard let read = ModelDigest(hex: text.bytes(in: bytes)) else { return nil }
            digest = (text, read)
            return read
        }
    }

    /// The event checked, its fields read from their bytes (`bytes`, the batch's): Strings are
    /// made only of what a report keeps (the device ID, the collection, the model; a failure's event
    /// ID and reason), and only when they differ from `previous`.
    func checked(in bytes: UnsafeBufferPointer<UInt8>, now: Date, appID: UUID, previous: inout Previous) throws(ReportFieldError) -> DeviceReport {
        guard (8...64).contains(id.count), id.allBytes(in: bytes, Self.isIDByte) else {
            throw ReportFieldError("id must be 8 to 64 characters of A-Z, a-z, 0-9, '-' and '_'")
        }
        guard (1...200).contains(deviceID.count), deviceID.allBytes(in: bytes, { $0 != UInt8(ascii: "|") }), Self.isPrintable(deviceID, in: bytes) else {
            throw ReportFieldError("deviceID must be 1 to 200 bytes without '|', control, format or line-separator characters")
        }
        guard (1...100).contains(collection.count), Self.isPrintable(collection, in: bytes) else { throw ReportFieldError("collection is not a collection identifier") }
        guard sequence >= 0 else { throw ReportFieldError("sequence must not be negative") }
        guard let deploymentID = previous.deploymentID(deployment, in: bytes) else { throw ReportFieldError("deployment must be a deployment ID (a UUID)") }
        guard (1...100).contains(model.count), Self.isPrintable(model, in: bytes) else { throw ReportFieldError("model is not a model name") }
        guard let digest = previous.digest(sha256, in: bytes) else { throw ReportFieldError("sha256 must be 64 lowercase hex digits") }
        guard let outcome = ReportOutcome(bytes: outcome.bytes(in: bytes)) else {
            throw ReportFieldError("outcome must be downloaded, opened, loaded or failed")
        }
        if let reason {
            guard outcome == .failed else { throw ReportFieldError("reason goes only with a failed outcome") }
            guard reason.count <= ReportBatch.maximumReason, Self.isPrintable(reason, in: bytes) else {
                throw ReportFieldError("reason must be at most \(ReportBatch.maximumReason) bytes without control, format or line-separator characters")
            }
        }
        guard let date = RFC3339.date(bytes: at.bytes(in: bytes)) else { throw ReportFieldError("at must be an RFC 3339 time, e.g. 2026-11-24T08:00:00Z") }
        guard date >= now.addingTimeInterval(-ReportBatch.oldest), date <= now.addingTimeInterval(ReportBatch.newest) else {
            throw ReportFieldError("at is more than 7 days ago or more than an hour ahead of the server's clock")
        }
        return DeviceReport(eventKey: ReportEventKey(previous.keys, eventID: id.bytes(in: bytes)),
                            deviceID: deviceID.string(in: bytes, reusing: &previous.deviceID),
                            collection: collection.string(in: bytes, reusing: &previous.collection), sequence: sequence, deploymentID: deploymentID,
                            model: model.string(in: bytes, reusing: &previous.model), sha256: digest, outcome: outcome,
                            failure: outcome == .failed ? DeviceReport.Failure(eventID: id.string(in: bytes), reason: reason?.string(in: bytes)) : nil,
                            at: date)
    }

    private static func isIDByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
    }

    /// No control, format (bidirectional overrides among them) or line-separator characters: they
    /// would disguise what the dashboard and the CLI show (the targeting text's rule).
    private static func isPrintable(_ text: ReportText, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // Printable ASCII (the usual text) has none of them; every ASCII one is below 0x20 or 0x7F.
        if text.allBytes(in: bytes, { $0 >= 0x20 && $0 < 0x7F }) { return true }
        return TargetingText.firstForbidden(in: text.string(in: bytes)) == nil
    }
}
