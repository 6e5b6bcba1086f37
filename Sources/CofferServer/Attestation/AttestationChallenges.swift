import CofferFormat
import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor

/// Single-use challenges for attestation, made without writing anything: handed to an app's
/// device, taken by the key request whose evidence binds it.
///
/// A challenge is 32 bytes (the size the protocol's client data has room for): when it expires
/// (4 bytes, seconds since 1970, big-endian), 8 random bytes, and the first 20 bytes of an
/// HMAC-SHA256 of the app's ID and those 12 bytes, under a key derived from the master key (so
/// every instance checks what any made, and nobody without the master key makes one). Issuing
/// one writes no row: a flood of challenge requests with one extracted credential fills no table
/// and leaves no quota of outstanding challenges to exhaust for the app's genuine installs. It is
/// taken once by inserting its SHA-256 into `attestation_challenges` (unique; of two requests
/// presenting it exactly one inserts), where it stays until it expires.
struct AttestationChallenges: Sendable {
    static let table = "attestation_challenges"
    /// How long a challenge may be used.
    static let lifetime: TimeInterval = 300
    /// A challenge's size in bytes.
    static let size = 32
    private static let macSize = 20

    private let key: SymmetricKey

    init(masterKey: MasterKey) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: masterKey.key, info: Data("coffer attestation challenge v1".utf8), outputByteCount: 32)
    }

    /// A new challenge for `appID` and when it expires.
    func issue(for appID: UUID, now: Date = Date()) -> (challenge: [UInt8], expiresAt: Date) {
        let expires = UInt32(clamping: Int64((now.timeIntervalSince1970 + Self.lifetime).rounded(.up)))
        var body = withUnsafeBytes(of: expires.bigEndian) { Array($0) }
        body += SymmetricKey(size: .bits128).withUnsafeBytes { Array($0.prefix(8)) }
        return (body + mac(body, appID: appID).prefix(Self.macSize), Date(timeIntervalSince1970: TimeInterval(expires)))
    }

    /// Takes `challenge` for `appID` if this server made it for that app, it is unexpired and
    /// nobody took it before; false otherwise.
    func consume(_ challenge: [UInt8], for appID: UUID, now: Date = Date(), on db: any Database) async throws -> Bool {
        guard let expires = expiry(of: challenge, for: appID), expires > now,
              expires.timeIntervalSince(now) <= Self.lifetime + 60
        else { return false }
        let rows = try await db.sql().insert(into: Self.table).columns("id", "app_id", "challenge_hash", "expires_at")
            .values(SQLBind(UUID()), SQLBind(appID), SQLBind(Self.hash(challenge)), SQLBind(expires))
            .ignoringConflicts(with: ["challenge_hash"]).returning("id").all()
        return !rows.isEmpty
    }

    /// When `challenge` expires, if its MAC is right for `appID` (compared in constant time).
    func expiry(of challenge: [UInt8], for appID: UUID) -> Date? {
        guard challenge.count == Self.size else { return nil }
        let body = Array(challenge.prefix(Self.size - Self.macSize))
        guard Secrets.constantTimeEqual(mac(body, appID: appID).prefix(Self.macSize), challenge.suffix(Self.macSize)) else { return nil }
        let seconds = body.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Forgets taken challenges once expired (periodic work): they can no longer be presented.
    static func removeExpired(on db: any Database) async throws {
        try await db.sql().delete(from: table).where("expires_at", .lessThanOrEqual, Date()).run()
    }

    private func mac(_ body: [UInt8], appID: UUID) -> [UInt8] {
        var message = withUnsafeBytes(of: appID.uuid) { Array($0) }
        message += body
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
    }

    private static func hash(_ challenge: [UInt8]) -> String { SHA256.hash(data: challenge).hexString }
}

extension Application {
    private struct AttestationChallengesKey: StorageKey { typealias Value = AttestationChallenges }

    /// The server's challenge maker (set by `configure`), for tests that need one made at another time.
    var attestationChallenges: AttestationChallenges? {
        get { storage[AttestationChallengesKey.self] }
        set { storage[AttestationChallengesKey.self] = newValue }
    }
}
