import CofferFormat
import Crypto
import Fluent
import NIOCore
import Vapor

/// Blobs: sealed models addressed by SHA-256.
///
/// `PUT /v1/teams/:team/blobs/:sha256` streams an upload to disk (never whole in memory), checks the
/// stated size (Content-Length), the digest and the container header, and stores it once however
/// often it is sent. `GET`/`HEAD /v1/blobs/:sha256` serve it to anyone who knows the address — the
/// bytes are sealed — with Range (and If-Range) support, a strong ETag and a year of public
/// caching, so a CDN can sit in front; the bodies it streams at once are bounded in all and per
/// client address (``StreamSlots``), since each holds memory until its client has read it.
struct BlobController: Sendable {
    struct BlobView: Content { let sha256: String; let size: Int64; let created: Bool }

    let store: any BlobStore
    let maximumSize: Int64
    /// The most bytes of blobs one team may store (nil: unlimited); see ``TeamQuota``.
    let teamQuota: Int64?
    let metrics: ServerMetrics
    /// Counts downloads for the dashboard's charts (in memory; flushed in the background).
    let usage: UsageCounter
    /// Requests for blobs the store does not have, per client address (see ``answer(_:withBody:)``).
    let misses: RateLimiter
    /// Past ``misses``, database look-ups of blobs not remembered, per client address (as many).
    let lookups: RateLimiter
    /// The bodies streamed at once, in all and per client address (see ``stream(_:range:status:to:)``).
    let streams: StreamSlots
    /// The sizes blobs were registered with, to refuse serving a damaged one.
    var registeredSizes = RegisteredBlobSizes()
    /// How long an upload's lease lasts after it was taken or last renewed (``LeaseKeeper``).
    var leaseLifetime = UploadLeaseRecord.lifetime

    func upload(req: Request) async throws -> Response {
        do {
            return try await leasedUpload(req)
        } catch var error as APIError {
            // The client may still be sending a body nobody will read: close the connection so it
            // sees the answer instead of waiting on a full socket buffer.
            error.headers.replaceOrAdd(name: .connection, value: "close")
            throw error
        }
    }

    private func leasedUpload(_ req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .developer)
        let address = try Self.address(req)
        guard let size = req.headers.first(name: .contentLength).flatMap(Int64.init) else {
            throw APIError(.lengthRequired, "length_required", "state the blob's size in Content-Length")
        }
        guard size >= 0 else { throw APIError.invalid("Content-Length must not be negative") }
        guard size <= maximumSize else {
            throw APIError(.payloadTooLarge, "too_large", "blobs are limited to \(maximumSize) bytes")
        }
        // A registered blob's size is known (it was checked when its bytes came): another size is
        // refused before any byte is read.
        let record = try await BlobRecord.find(address, on: req.db)
        if let record, record.size != size {
            throw APIError(.unprocessableEntity, "digest_mismatch", "a blob with this address has \(record.size) bytes, not \(size)")
        }
        // The lease comes before looking for the blob: blob collection never removes a leased blob,
        // and one being collected now is gone once its hold is released.
        let lease = UploadLeaseRecord.forUpload(of: address, lifetime: leaseLifetime)
        try await lease.create(on: req.db)
        do {
            try await CollectionHold.waitUntilReleased(address, on: req.db)
            // Decided under the lease, on a record and bytes that stay (the body is still unread):
            // a record being collected could otherwise make the upload free, then vanish.
            let held = try await HeldBlob.read(address, store: store, on: req.db)
            if let teamQuota {
                try await TeamQuota(limit: teamQuota).admitUpload(of: held, size: size, for: team, on: req.db, reservingOn: lease)
            }
            let keeper = try LeaseKeeper(lease, lifetime: leaseLifetime, on: req.db, logger: req.logger)
            let response = try await save(req, address: address, size: size, held: held, team: team, keeping: keeper)
            try await lease.delete(on: req.db)
            return response
        } catch {
            try? await lease.delete(on: req.db)
            throw error
        }
    }

    private func save(_ req: Request, address: String, size: Int64, held: HeldBlob, team: TeamRecord, keeping lease: LeaseKeeper) async throws -> Response {
        if held.isStored(at: size) {
            // The bytes were not sent: the grace period is not restarted (anyone who knows an address
            // and size, which manifests publish, could otherwise keep an unused blob for ever).
            try await Self.register(address, size: size, team: team, uploaded: false, on: req.db)
            return try await BlobView(sha256: address, size: size, created: false).encodeResponse(status: .ok, for: req)
        }
        // A stored blob of another size is damaged (a blob is published only after its bytes hashed
        // to its address, and one address has one size): the upload below, checked the same way,
        // replaces it. Refusing would leave the damage in place for ever.
        if let stored = held.storedSize { req.logger.warning("blob \(address) is stored with \(stored) bytes, not \(size); replacing it with the upload once it checks") }
        let upload = try await store.beginUpload(for: address, by: try req.user().userID)
        do {
            try await receive(req, into: upload, size: size, address: address, keeping: lease)
            try await upload.publish(as: address)
        } catch {
            await upload.discard()
            throw error
        }
        try await Self.register(address, size: size, team: team, on: req.db)
        try await Audit.record(on: req.db, teamID: team.id, action: "blob.upload", actor: try req.user().name, target: address, outcome: "ok")
        return try await BlobView(sha256: address, size: size, created: true).encodeResponse(status: .created, for: req)
    }

    /// Streams the body into `upload`, hashing and checking it on the way, and keeps the upload's
    /// lease, with the quota it reserved, for as long as the body keeps arriving.
    private func receive(_ req: Request, into upload: any BlobUpload, size: Int64, address: String, keeping lease: LeaseKeeper) async throws {
        var intake = BlobIntake(size: size)
        try await intake.receive(req.body, into: upload, keeping: lease)
        guard try intake.finish() == address else {
            throw APIError(.unprocessableEntity, "digest_mismatch", "the body's SHA-256 differs from the address it was sent to")
        }
    }

    /// Records the blob (once) and, when its bytes were `uploaded`, the time, which restarts its
    /// grace period.
    static func register(_ address: String, size: Int64, team: TeamRecord, uploaded: Bool = true, on db: any Database) async throws {
        if let existing = try await BlobRecord.find(address, on: db) {
            // Another team's upload (replacing a missing or damaged copy) does not keep the owner's blob.
            guard uploaded, existing.$team.id == team.id else { return }
            existing.lastUploadedAt = Date()
            try await existing.update(on: db)
            return
        }
        let record = BlobRecord(sha256: address, size: size, teamID: try team.requireID())
        record.lastUploadedAt = Date()
        do {
            try await record.create(on: db)
        } catch {
            // Another instance registered the same bytes first.
            guard try await BlobRecord.find(address, on: db) != nil else { throw error }
        }
    }

    /// `GET /v1/blobs/:sha256`: the blob, or the part its Range names (206), or 416.
    func download(req: Request) async throws -> Response {
        try await answer(req, withBody: true)
    }

    /// `HEAD /v1/blobs/:sha256`: the status and headers a GET with the same Range gets, without a body.
    func head(req: Request) async throws -> Response {
        try await answer(req, withBody: false)
    }

    /// A GET's or HEAD's answer: the Range header (hostile numbers included, see ``ByteRangeRequest``)
    /// decides 200, 206 or 416, unless an If-Range names another representation than the blob's
    /// ETag (then 200); HEAD carries the same status, Content-Range and Content-Length.
    ///
    /// The routes are anonymous, and asking an object store for an address it does not have is a
    /// billed request on the connection pool every team's downloads share. So each 404 costs the
    /// client's address one miss of ``misses``; past its budget, only a blob with a record in the
    /// database (remembered, or one indexed look-up) goes on to the store, any other is answered
    /// 429 first. Devices behind one CDN or NAT share an address: a flood from behind it must not
    /// keep them from the blobs a deployment names, which all have records. Those look-ups have a
    /// budget of their own (``lookups``), so a flood past the first costs the database no more
    /// than the first cost the store; past both, only remembered blobs are served.
    ///
    /// A body streamed through the server holds one of ``streams`` until the store's work for it has
    /// ended (see ``stream(_:range:status:to:)``); HEAD, 304, 416 and presigned redirects take none.
    private func answer(_ req: Request, withBody: Bool) async throws -> Response {
        let address = try Self.address(req)
        let budget = "address:" + AddressBudget.key(req.clientAddress)
        if let wait = misses.exhausted(budget), registeredSizes.remembered(address) == nil {
            let refusal = APIError(.tooManyRequests, "rate_limited", "too many requests for blobs this server does not have; retry in \(wait) s",
                                   headers: ["Retry-After": "\(wait)", "Cache-Control": "no-store"])
            guard lookups.acquire(budget) == nil, try await registeredSizes.size(of: address, on: req.db) != nil else { throw refusal }
        }
        guard let size = try await store.size(of: address) else {
            // A blob collected since its record was remembered is not remembered any more.
            registeredSizes.forget(address)
            _ = misses.acquire(budget)
            // Never cached: a 404 may be kept by heuristic (RFC 9111 §4.2.2), and a CDN that kept
            // one would refuse the blob to every device behind it once it is uploaded (again).
            var missing = APIError.notFound("blob")
            missing.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
            throw missing
        }
        // A stored size other than the registered one is damage (a lost tail, a bad disk): served,
        // it would be cached for a year as the blob. Refused uncached until an upload replaces it.
        if let registered = try await registeredSizes.size(of: address, on: req.db), registered != size {
            req.logger.error("blob \(address) is stored with \(size) bytes, registered with \(registered); refusing to serve it until it is uploaded again")
            throw APIError(.serviceUnavailable, "blob_damaged", "this blob's stored copy is damaged; it must be uploaded again",
                           headers: ["Cache-Control": "no-store"])
        }
        let etag = "\"\(address)\""
        if let match = req.headers.first(name: .ifNoneMatch), match == etag || match == "*" {
            let response = Response(status: .notModified)
            Self.addCacheHeaders(to: response, etag: etag)
            return response
        }
        // If-Range asks for the range only of the representation it names (RFC 9110 §13.1.5), by
        // strong comparison with the ETag; a blob sends no Last-Modified, so a date never matches.
        // Any other value: the range is ignored, and the whole blob served.
        let ifRange = req.headers.first(name: .ifRange)
        let range = ByteRangeRequest(header: ifRange == nil || ifRange == etag ? req.headers.first(name: .range) : nil, size: size)
        if withBody, range != .unsatisfiable, let url = store.directURL(of: address) {
            return redirect(to: url, address: address, range: range)
        }
        let response: Response
        switch range {
        case .unsatisfiable:
            // Not the blob's bytes: never cached (a shared cache that kept a 416 under the blob's
            // URL would refuse the model to every device behind it for a year).
            response = Response(status: .rangeNotSatisfiable)
            response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
            response.headers.replaceOrAdd(name: .contentRange, value: "bytes */\(size)")
            if withBody {
                try response.content.encode(ErrorBody(error: "range_not_satisfiable", reason: "the blob has \(size) bytes"), as: .json)
            } else {
                response.headers.replaceOrAdd(name: .contentLength, value: "0")
            }
        case .whole:
            response = try withBody ? stream(address, range: 0..<size, status: .ok, to: budget) : Self.head(of: 0..<size, status: .ok)
        case .range(let range):
            response = try withBody ? stream(address, range: range, status: .partialContent, to: budget)
                : Self.head(of: range, status: .partialContent)
            // The range is never empty and ends at most at `size`: upperBound - 1 cannot trap.
            response.headers.replaceOrAdd(name: .contentRange, value: "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)")
        }
        response.headers.replaceOrAdd(name: .acceptRanges, value: "bytes")
        if range != .unsatisfiable { Self.addCacheHeaders(to: response, etag: etag) }
        return response
    }

    /// A GET's body, `range` of the blob streamed from the store and counted as a download, while
    /// it holds a slot of ``streams`` for `client` (its budget key): its memory, file handle or
    /// store connection are held until its client has taken it, however slowly it reads. Refused
    /// uncached with `Retry-After`, before the store is asked for a byte, when the client's address
    /// (429) or the server (503) streams all it may.
    ///
    /// The slot goes to the store with the body (``BlobStore/stream(_:range:status:metrics:holding:)``),
    /// which gives it back when its reading and writing have ended, even if the client went away
    /// and Vapor let the response go first.
    private func stream(_ address: String, range: Range<Int64>, status: HTTPResponseStatus, to client: String) throws -> Response {
        let slot: StreamSlot
        do throws(StreamSlots.Refusal) {
            slot = try streams.take(for: client)
        } catch {
            let later: HTTPHeaders = ["Retry-After": "10", "Cache-Control": "no-store"]
            switch error {
            case .addressFull:
                throw APIError(.tooManyRequests, "too_many_downloads",
                               "your address has as many downloads in progress as one address may; retry when one has finished", headers: later)
            case .full:
                throw APIError(.serviceUnavailable, "downloads_busy", "too many downloads are in progress on this server; retry shortly",
                               headers: later)
            }
        }
        let response = store.stream(address, range: range, status: status, metrics: metrics, holding: slot)
        usage.countDownload(address, from: range.lowerBound)
        return response
    }

    /// A GET answered by the store itself (COFFER_S3_PRESIGN): a temporary redirect to a presigned
    /// URL, which the client asks with the same Range. Not cached: the URL expires.
    private func redirect(to url: String, address: String, range: ByteRangeRequest) -> Response {
        let response = Response(status: .temporaryRedirect)
        response.headers.replaceOrAdd(name: .location, value: url)
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        response.headers.replaceOrAdd(name: .contentLength, value: "0")
        if case .range(let part) = range { usage.countDownload(address, from: part.lowerBound) } else { usage.countDownload(address, from: 0) }
        return response
    }

    /// A HEAD answer for `range` of a blob: the length a GET would send, no body.
    private static func head(of range: Range<Int64>, status: HTTPResponseStatus) -> Response {
        let response = Response(status: status)
        response.headers.replaceOrAdd(name: .contentLength, value: "\(range.count)")
        response.headers.replaceOrAdd(name: .contentType, value: "application/octet-stream")
        return response
    }

    static func addCacheHeaders(to response: Response, etag: String) {
        response.headers.replaceOrAdd(name: .eTag, value: etag)
        response.headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=31536000, immutable")
    }

    static func address(_ req: Request) throws -> String {
        guard let address = req.parameters.get("sha256"), BlobAddress.isValid(address) else {
            throw APIError.invalid("a blob address is the SHA-256 of its bytes in 64 lowercase hex digits")
        }
        return address
    }
}

/// The blob routes anyone may use (the bytes are sealed).
struct PublicBlobRoutes: RouteCollection {
    let controller: BlobController

    func boot(routes: any RoutesBuilder) throws {
        routes.get("v1", "blobs", ":sha256", use: controller.download)
        routes.on(.HEAD, "v1", "blobs", ":sha256", use: controller.head)
    }
}

/// The upload route, behind token authentication.
struct UploadRoutes: RouteCollection {
    let controller: BlobController

    func boot(routes: any RoutesBuilder) throws {
        routes.on(.PUT, "v1", "teams", ":team", "blobs", ":sha256", body: .stream, use: controller.upload)
    }
}
