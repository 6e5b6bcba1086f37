import CofferFormat
import Crypto
import Fluent
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Answers devices' manifest requests from memory.
///
/// A collection's active deployment (and, during a staged rollout, the one it stages from) is
/// compiled once (``CompiledCollection``) and each of its targets signed once per signing period; the database is asked at most once per `freshness`
/// whether the collection's sequence number moved (another instance may have activated), and an
/// activation on this instance drops the entry at once. Nothing re-signs or re-reads blobs per
/// request.
///
/// Signing periods: `issuedAt` is the start of the current period (a quarter of the lifetime, at
/// most a day) and `expiresAt = issuedAt + lifetime`, so a served manifest always has at least
/// three quarters of its lifetime left, and instances sign identical bytes within a period.
final class ManifestService: Sendable {
    let signer: ManifestSigner
    let lifetime: TimeInterval
    let publicURL: String?
    let freshness: TimeInterval
    private let collections = NIOLockedValueBox<[Key: CompiledCollection]>([:])
    /// Collections found with no active deployment, and when: asked again only past `freshness`,
    /// so a credential of an app bound to a collection not yet activated costs no query per request.
    /// At most one entry per existing collection.
    private let inactive = NIOLockedValueBox<[Key: Date]>([:])

    /// A team's collection, as the cache knows it (hashed as is: no text is made per request).
    private struct Key: Hashable {
        let teamID: UUID
        let identifier: String
    }

    init(signer: ManifestSigner, lifetime: TimeInterval, publicURL: String?, freshness: TimeInterval = 1) {
        self.signer = signer
        self.lifetime = lifetime
        self.publicURL = publicURL
        self.freshness = freshness
    }

    /// A signed manifest: the envelope's bytes and their strong ETag.
    struct Answer: Sendable {
        let body: ByteBuffer
        let etag: String
        /// The response headers for a 200 (with Content-Length) and for a 304, made once per signing.
        let okHeaders: HTTPHeaders
        let notModifiedHeaders: HTTPHeaders
        /// The whole 200 and 304 responses as HTTP/1.1 bytes, for the device listener's keep-alive
        /// answers (``ResponseBytes``), made once per signing.
        let okResponse: ByteBuffer
        let notModifiedResponse: ByteBuffer

        init(body: ByteBuffer, etag: String) {
            self.body = body
            self.etag = etag
            var common = HTTPHeaders()
            common.add(name: "ETag", value: etag)
            common.add(name: "Cache-Control", value: "private, no-cache")
            notModifiedHeaders = common
            common.add(name: "Content-Type", value: "application/json; charset=utf-8")
            common.add(name: "Content-Length", value: String(body.readableBytes))
            okHeaders = common
            okResponse = ResponseBytes.encode(status: .ok, headers: okHeaders, body: body, allocator: ByteBufferAllocator())
            notModifiedResponse = ResponseBytes.encode(status: .notModified, headers: notModifiedHeaders, body: nil, allocator: ByteBufferAllocator())
        }
    }

    /// The answer from memory alone — the collection cached, confirmed within `freshness` — or nil,
    /// and the caller takes the asynchronous path. Runs on the event loop: no database, no task.
    func cachedManifest(teamID: UUID, identifier: String, device: DeviceAttributes) throws -> Answer? {
        let key = Self.key(teamID, identifier)
        let now = Date()
        // Past `freshness`, one request re-checks the database while the others keep using this.
        let cached: CompiledCollection? = collections.withLockedValue { cache in
            guard let index = cache.index(forKey: key) else { return nil }
            return cache.values[index].age.admit(now: now, within: freshness) ? cache.values[index] : nil
        }
        guard let cached else { return nil }
        return try answer(cached, key: key, device: device)
    }

    /// The signed manifest of collection `identifier` of team `teamID` for `device`; nil when the
    /// team has no such collection or it has no active deployment.
    func manifest(teamID: UUID, identifier: String, device: DeviceAttributes, on db: any Database) async throws -> Answer? {
        guard let compiled = try await current(teamID: teamID, identifier: identifier, on: db) else { return nil }
        return try answer(compiled, key: Self.key(teamID, identifier), device: device)
    }

    /// The device's target, signed once per signing period and kept.
    private func answer(_ compiled: CompiledCollection, key: Key, device: DeviceAttributes) throws -> Answer {
        let target = compiled.variant(for: device)
        let period = signingPeriod
        let index = Int64((Date().timeIntervalSince1970 / period).rounded(.down))
        if let variant = compiled.signed[target], variant.period == index {
            return variant.answer
        }
        let issuedAt = Date(timeIntervalSince1970: Double(index) * period)
        let manifest = compiled.manifest(target, issuedAt: issuedAt, expiresAt: issuedAt.addingTimeInterval(lifetime))
        let bytes = try SignedManifest.sign(manifest, with: signer.privateKey)
        let variant = CompiledCollection.SignedVariant(
            period: index, answer: Answer(body: ByteBuffer(data: bytes), etag: "\"" + SHA256.hash(data: bytes).prefix(16).hexString + "\""))
        collections.withLockedValue { cache in
            // Keep what we signed unless the entry was dropped or replaced meanwhile.
            if cache[key]?.sequence == compiled.sequence, cache[key]?.deploymentID == compiled.deploymentID {
                cache[key]?.signed[target] = variant
            }
        }
        return variant.answer
    }

    /// Forgets a collection (after an activation on this instance).
    func invalidate(_ collectionID: UUID) {
        collections.withLockedValue { cache in cache = cache.filter { $0.value.collectionID != collectionID } }
        inactive.withLockedValue { $0.removeAll() }
    }

    /// Seconds per signing period: a quarter of the lifetime, between 1 s and a day.
    var signingPeriod: TimeInterval { max(1, min(lifetime / 4, 86_400)).rounded(.down) }

    private func current(teamID: UUID, identifier: String, on db: any Database) async throws -> CompiledCollection? {
        let key = Self.key(teamID, identifier)
        let cached = collections.withLockedValue { $0[key] }
        let now = Date()
        if let cached, cached.age.isFresh(now: now, within: freshness) { return cached }
        if cached == nil, let seen = inactive.withLockedValue({ $0[key] }), now.timeIntervalSince(seen) < freshness { return nil }
        var row = try await Self.row(teamID: teamID, identifier: identifier, on: db)
        // The collection, its deployment and its rollout are read one after the other: a stage
        // change committed between them would compile (and cache) a mix under the old sequence
        // number. Read the sequence again after; if it moved, compile again.
        for _ in 0..<3 {
            guard let current = row else {
                collections.withLockedValue { $0[key] = nil }
                return nil
            }
            if var cached, cached.collectionID == current.id, cached.sequence == current.sequence {
                cached.age.confirm(at: now)
                collections.withLockedValue { $0[key]?.age.confirm(at: now) }
                return cached
            }
            let compiled = try await CompiledCollection.load(current, publicURL: publicURL, on: db)
            let after = try await Self.row(teamID: teamID, identifier: identifier, on: db)
            guard after?.id != current.id || after?.sequence != current.sequence else {
                collections.withLockedValue { $0[key] = compiled }
                inactive.withLockedValue { inactive in
                    if compiled == nil { inactive[key] = now } else { inactive[key] = nil }
                }
                return compiled
            }
            row = after
        }
        // Changing faster than it can be read: answer from the database without caching.
        guard let last = row else { return nil }
        return try await CompiledCollection.load(last, publicURL: publicURL, on: db)
    }

    private static func row(teamID: UUID, identifier: String, on db: any Database) async throws -> CollectionRecord? {
        try await CollectionRecord.query(on: db).filter(\.$team.$id == teamID).filter(\.$identifier == identifier).first()
    }

    private static func key(_ teamID: UUID, _ identifier: String) -> Key { Key(teamID: teamID, identifier: identifier) }
}
