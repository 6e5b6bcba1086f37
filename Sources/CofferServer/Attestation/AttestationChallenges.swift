import CofferFormat
import Crypto
import Fluent
import Foundation
import SQLKit

/// Single-use challenges for attestation: handed to an app's device, consumed by the key request
/// whose evidence binds it. Stored as SHA-256 only; a challenge is taken in one `DELETE … RETURNING`,
/// so of two requests presenting the same one, exactly one gets it.
enum AttestationChallenges {
    static let table = "attestation_challenges"
    /// How long a challenge may be used.
    static let lifetime: TimeInterval = 300
    /// The most unexpired challenges an app may hold: more is 429 until some expire or are used.
    static let maximumOutstandingPerApp = 10_000

    /// A new challenge for `appID` (32 random bytes) and when it expires.
    static func issue(for appID: UUID, on db: any Database) async throws -> (challenge: [UInt8], expiresAt: Date) {
        let sql = try db.sql()
        let now = Date()
        let outstanding = try await sql.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from(table)
            .where("app_id", .equal, appID).where("expires_at", .greaterThan, now).first(decoding: Count.self)?.n ?? 0
        guard outstanding < maximumOutstandingPerApp else {
            throw APIError(.tooManyRequests, "rate_limited", "too many unused attestation challenges; use or let some expire first",
                           headers: ["Retry-After": "\(Int(lifetime))"])
        }
        let challenge = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let expiresAt = now.addingTimeInterval(lifetime)
        try await sql.insert(into: table).columns("id", "app_id", "challenge_hash", "expires_at")
            .values(SQLBind(UUID()), SQLBind(appID), SQLBind(hash(challenge)), SQLBind(expiresAt)).run()
        return (challenge, expiresAt)
    }

    /// Takes `challenge` for `appID` if it was issued to that app, is unexpired and unused; false otherwise.
    static func consume(_ challenge: [UInt8], for appID: UUID, on db: any Database) async throws -> Bool {
        let rows = try await db.sql().delete(from: table)
            .where("challenge_hash", .equal, hash(challenge)).where("app_id", .equal, appID).where("expires_at", .greaterThan, Date())
            .returning("id").all()
        return !rows.isEmpty
    }

    /// Removes expired challenges (periodic work).
    static func removeExpired(on db: any Database) async throws {
        try await db.sql().delete(from: table).where("expires_at", .lessThanOrEqual, Date()).run()
    }

    private struct Count: Decodable { let n: Int }

    private static func hash(_ challenge: [UInt8]) -> String { SHA256.hash(data: challenge).hexString }
}
