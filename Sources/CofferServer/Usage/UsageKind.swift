/// What the server counts per day for a team's charts (table `usage_daily`, column `kind`).
enum UsageKind: String, Sendable, Hashable, CaseIterable {
    /// A device (or anyone) started downloading a blob: a `GET /v1/blobs/SHA` answered with the
    /// whole blob, or with a range that starts at byte 0. Resumed pieces (ranges starting later),
    /// `HEAD`, 304 answers and refusals are not downloads. The subject is the blob's address.
    case download
    /// A model key delivered to a device of an app (not refusals). The subject is the key ID.
    case keyDelivery = "key_delivery"
}
