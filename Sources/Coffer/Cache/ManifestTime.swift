import CofferFormat
import Foundation

/// The time a collection's manifests are judged by (docs/SDK.md, "Trust"): the device's clock, but
/// never earlier than the newest `issuedAt` of a manifest the cache verified for the collection.
///
/// The device's clock is the SDK's only time source, and whoever answers its time requests (a
/// hostile network spoofing NTP to an edge box) can set it back: a manifest that had expired
/// would verify again, and a cached one would stay fresh, so that forged `304 Not Modified`
/// answers kept it for ever. A manifest the server signed shows that its `issuedAt` has come (the
/// server dates a manifest at the start of its signing period, never ahead of its own clock), so
/// "now" is never earlier than that. A clock more than ``allowedSkew`` behind it has been set
/// back, and how long ago the cached manifest really expired cannot be told: the cache is then
/// not fresh (every check asks for a newly signed manifest, so a 304 is refused) and its manifest
/// counts as expired.
struct ManifestTime: Sendable, Equatable {
    /// How far the device's clock may be behind a verified `issuedAt` before it counts as set
    /// back: a device's and a server's clocks differ by seconds when both keep time.
    static let allowedSkew: TimeInterval = 10 * 60

    /// What the device's clock said.
    let deviceClock: Date
    /// The newest `issuedAt` of a manifest the cache verified for the collection; nil when none.
    let newestIssuedAt: Date?

    init(deviceClock: Date, newestIssuedAt: Date?) {
        self.deviceClock = deviceClock
        self.newestIssuedAt = newestIssuedAt
    }

    /// The time for the manifests `verified` (the cached state's, the floor `failed.json` keeps).
    init(deviceClock: Date, verified: [Manifest?]) {
        self.init(deviceClock: deviceClock, newestIssuedAt: Self.newestIssuedAt(of: verified))
    }

    /// The newest `issuedAt` of `manifests`, skipping nil ones; nil when there is none.
    static func newestIssuedAt(of manifests: [Manifest?]) -> Date? {
        manifests.compactMap { $0?.issuedAt }.max()
    }

    /// The time to judge expiry and freshness by: the device's clock, or the newest verified
    /// `issuedAt` when that is later.
    var now: Date {
        guard let newestIssuedAt, newestIssuedAt > deviceClock else { return deviceClock }
        return newestIssuedAt
    }

    /// Whether the device's clock is more than ``allowedSkew`` behind the newest verified `issuedAt`.
    var isClockBehind: Bool {
        guard let newestIssuedAt else { return false }
        return deviceClock < newestIssuedAt.addingTimeInterval(-Self.allowedSkew)
    }

    /// Whether a manifest that expires at `expiresAt` counts as expired: its expiry has come by
    /// ``now``, or the device's clock is behind, so it cannot be told whether it has.
    func hasPassed(_ expiresAt: Date) -> Bool {
        isClockBehind || expiresAt <= now
    }
}
