import CofferAttestation
import Fluent
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// The operator's copy of Google's attestation status list (revoked and suspended certificate
/// serials), kept in the database so every instance uses the same one, and in memory for checks.
///
/// `coffer-server attestation update-revocations FILE` replaces it (``store(_:on:)``); each
/// instance reloads it within a minute (``refresh(on:)``, periodic work) and at start.
final class AttestationRevocations: Sendable {
    static let table = "attestation_revocations"
    /// The largest list accepted (Google's is a few hundred KB).
    static let maximumBytes = 16 * 1024 * 1024

    private struct Loaded: Sendable { var list: AndroidRevocationList; var updatedAt: Date? }
    private let loaded = NIOLockedValueBox(Loaded(list: .empty, updatedAt: nil))

    /// The list in use now.
    var current: AndroidRevocationList { loaded.withLockedValue { $0.list } }

    /// Reloads the list when the stored one changed since the last load.
    func refresh(on db: any Database) async throws {
        let sql = try db.sql()
        guard let row = try await sql.select().column("updated_at").from(Self.table).where("id", .equal, 1).first(decoding: Stamp.self) else { return }
        guard row.updated_at != loaded.withLockedValue({ $0.updatedAt }) else { return }
        guard let full = try await sql.select().columns("list", "updated_at").from(Self.table).where("id", .equal, 1).first(decoding: Stored.self) else { return }
        let list = try AndroidRevocationList(json: Array(full.list.utf8))
        loaded.withLockedValue { $0 = Loaded(list: list, updatedAt: full.updated_at) }
    }

    /// Checks `json` as a status list and stores it for every instance; returns how many serials it lists.
    static func store(_ json: [UInt8], on db: any Database) async throws -> Int {
        guard json.count <= maximumBytes else { throw AttestationFailure.invalid("the revocation list is over \(maximumBytes) bytes") }
        let list = try AndroidRevocationList(json: json)
        let text = String(decoding: json, as: UTF8.self)
        try await db.transaction { db in
            let sql = try db.sql()
            try await sql.delete(from: table).where("id", .equal, 1).run()
            try await sql.insert(into: table).columns("id", "list", "entries", "updated_at")
                .values(SQLBind(1), SQLBind(text), SQLBind(list.count), SQLBind(Date())).run()
        }
        return list.count
    }

    private struct Stamp: Decodable { let updated_at: Date }
    private struct Stored: Decodable { let list: String; let updated_at: Date }
}

extension Application {
    private struct AttestationRevocationsKey: StorageKey { typealias Value = AttestationRevocations }

    /// The server's revocation list (set by `configure`), for reloading it from outside.
    var attestationRevocations: AttestationRevocations? {
        get { storage[AttestationRevocationsKey.self] }
        set { storage[AttestationRevocationsKey.self] = newValue }
    }
}
