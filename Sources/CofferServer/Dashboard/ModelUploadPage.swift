import Fluent
import NIOCore
import Vapor

/// `POST /dashboard/teams/:team/collections/:collection/models/:model`: a developer uploads a sealed
/// model for one model name of a collection, from the new-deployment and clone pages.
///
/// Two ways in, one set of checks (``BlobIntake``, the API's own, and ``ModelVersions``, which
/// refuses passphrase containers and keys of other teams):
/// - the dashboard's script sends the file itself as the body (`application/octet-stream`, its
///   size in Content-Length, the CSRF token in `X-CSRF-Token`) and shows the progress; the answer
///   is JSON, `{sha256, size, keyID, label}` or `{error, code, reason}`. Refused 413
///   `quota_exceeded`, it asks with an empty body whether the server stores the file, naming its
///   SHA-256 in ``declaredAddressHeader`` (``storedBlob(_:team:req:)``): bytes it stores cost no
///   quota, as through the API;
/// - a browser without JavaScript posts the form (`multipart/form-data`), read as it streams
///   (``MultipartModelForm``); the answer sends it back to its page with the model chosen.
///
/// Before a byte of the body is read, it is bounded by the server's blob limit and, under a team
/// quota, the size it states (Content-Length; a form's, bounded by the blob limit) is reserved
/// against the quota on the upload's lease, as the API does (``TeamQuota``): a team without room is
/// refused 413 `quota_exceeded` at once, and uploads started together cannot each pass the quota.
/// An upload that declares its SHA-256 is charged as the API's `PUT` to that address is: nothing
/// for bytes the server already stores at that size (a team near its quota can still choose a model
/// it uploaded before), and its body must hash to the address it declared.
/// The body is then streamed into an upload of the blob store that no reader sees (the folder's
/// `incoming/`), the lease renewed while it arrives, and published under its SHA-256: bytes the
/// server already has are stored once and their model version reused.
struct ModelUploadPage: RouteCollection {
    struct Uploaded: Content { let sha256: String; let size: Int64; let keyID: String; let label: String }
    struct Failure: Content { let error: String; let code: String?; let reason: String }

    /// The header in which the script may declare the SHA-256 (64 lowercase hex digits) of the file
    /// it sends, so that bytes the server already stores cost no quota.
    static let declaredAddressHeader = "X-Coffer-SHA256"

    let store: any BlobStore
    let maximumSize: Int64
    /// The team storage quota (nil: unlimited), checked before an upload's body is read.
    var teamQuota: Int64? = nil
    /// How long an upload's lease lasts after it was taken or last renewed (``LeaseKeeper``).
    var leaseLifetime = UploadLeaseRecord.lifetime

    func boot(routes: any RoutesBuilder) throws {
        routes.on(.POST, "dashboard", "teams", ":team", "collections", ":collection", "models", ":model", body: .stream, use: upload)
    }

    func upload(req: Request) async throws -> Response {
        let isScript = MultipartModelForm.boundary(of: req) == nil
        do {
            let (team, collection) = try await req.collection(requiring: .developer)
            guard let model = req.parameters.get("model"), collection.modelNames.contains(model) else {
                throw APIError.notFound("model name")
            }
            guard let length = req.headers.first(name: .contentLength).flatMap(Int64.init), length >= 0 else {
                throw APIError(.lengthRequired, "length_required", "state the upload's size in Content-Length")
            }
            if isScript {
                guard req.headers.contentType == .binary else {
                    throw APIError(.unsupportedMediaType, "unsupported_media_type", "send the sealed model as application/octet-stream or in a form")
                }
                guard length <= maximumSize else { throw APIError(.payloadTooLarge, "too_large", "blobs are limited to \(maximumSize) bytes") }
                let declared = try Self.declaredAddress(req)
                let (address, size) = if let declared, length == 0 {
                    try await storedBlob(declared, team: team, req: req)
                } else {
                    try await receiveBody(req, length: length, declaring: declared, team: team)
                }
                let version = try await keep(address, size: size, model: model, team: team, collection: collection, req: req)
                return try await version.encodeResponse(status: .created, for: req)
            }
            // Subtracted, not added: the setting may be as large as Int64.max (length is not negative).
            guard length - Int64(MultipartModelForm.overheadLimit) <= maximumSize else {
                throw APIError(.payloadTooLarge, "too_large", "blobs are limited to \(maximumSize) bytes")
            }
            // The file is at most the body and the blob limit: what the upload reserves.
            let (address, size, fields) = try await receiveForm(req, reserving: min(length, maximumSize), team: team)
            req.storage[UploadFields.self] = fields
            let version = try await keep(address, size: size, model: model, team: team, collection: collection, req: req)
            var picks = DeploymentFormPage.picks(fields)
            if let index = collection.modelNames.firstIndex(of: model) { picks[index] = version.sha256 }
            return req.seeOther(DeploymentFormPage.formPath(team: team.name, collection: collection.identifier, from: fields["from"], picks: picks))
        } catch {
            await releaseLease(req)
            // The browser may still be sending a body nobody will read: close the connection so it
            // sees the answer instead of waiting on a full socket buffer.
            guard isScript else {
                if case DashboardError.signInRequired = error { throw error }
                if let error = error as? APIError, error.status == .unauthorized { throw error }
                let response = try await refusedForm(req, error: error)
                response.headers.replaceOrAdd(name: .connection, value: "close")
                return response
            }
            var (status, _, message) = DashboardErrorMiddleware.describe(error, logger: req.logger)
            if case DashboardError.signInRequired = error { status = .unauthorized }
            if status == .unauthorized { message = "Your session has ended: sign in again in another tab, then upload." }
            let response = try await Failure(error: "\(status.code)", code: (error as? APIError)?.code, reason: message).encodeResponse(status: status, for: req)
            response.headers.replaceOrAdd(name: .connection, value: "close")
            DashboardErrorMiddleware.addRetryAfter(for: error, to: response)
            return response
        }
    }

    /// A refused upload without a script: its page again, the reason beside the upload form —
    /// or the error page when the form itself is not to be trusted (a CSRF or role refusal).
    private func refusedForm(_ req: Request, error: any Error) async throws -> Response {
        let (status, _, message) = DashboardErrorMiddleware.describe(error, logger: req.logger)
        guard status != .forbidden, let (team, collection) = try? await req.collection(requiring: .developer),
              let model = req.parameters.get("model"), let index = collection.modelNames.firstIndex(of: model)
        else { return try await DashboardErrorMiddleware().respond(to: req, chainingTo: Throwing(error: error)) }
        let fields = req.storage[UploadFields.self] ?? [:]
        var source: DeploymentRecord?
        if let from = fields["from"].flatMap(UUID.init(uuidString:)) {
            source = try await DeploymentRecord.query(on: req.db).filter(\.$id == from).filter(\.$collection.$id == collection.requireID()).first()
        }
        var input = try await source.asyncMap { try await DeploymentForms.cloneInput($0, collection: collection, on: req.db) } ?? DeploymentFormPage.Input()
        input.picks.merge(DeploymentFormPage.picks(fields)) { $1 }
        let page = try await DeploymentFormPage.make(req, team: team, collection: collection, source: source, input: input, error: nil,
                                                     maximumSize: maximumSize, uploadError: (index, message))
        let response = try await req.page("deployment-form", page, status: status)
        DashboardErrorMiddleware.addRetryAfter(for: error, to: response)
        return response
    }

    /// The SHA-256 the script declared for its body (``declaredAddressHeader``), if it did; 400 when
    /// it is not a content address.
    static func declaredAddress(_ req: Request) throws -> String? {
        guard let declared = req.headers.first(name: declaredAddressHeader) else { return nil }
        guard BlobAddress.isValid(declared) else {
            throw APIError.invalid("\(declaredAddressHeader) is the SHA-256 of the file in 64 lowercase hex digits")
        }
        return declared
    }

    /// The blob at `address`, which an empty body declared (the script's question after a
    /// `quota_exceeded`: does the server have this file?), when the store holds it: charged nothing,
    /// as the API's `PUT` of a stored blob is, and made a version of only if it is this team's model
    /// (``keep(_:size:model:team:collection:req:)``); 409 `not_stored` otherwise, or 409
    /// `stored_damaged` for a registered blob whose stored copy is missing or of another size: the
    /// script then sends the file with its declaration, free and checked against it, and the copy
    /// is replaced. A browser sends a body whole before it reads an answer, so asking with the file
    /// first would send it twice.
    private func storedBlob(_ address: String, team: TeamRecord, req: Request) async throws -> (String, Int64) {
        let (_, held) = try await takeLease(declaring: address, req: req)
        if held.isDamaged {
            // Sending it costs nothing (a registered blob is counted already) and replaces the copy.
            throw APIError(.conflict, "stored_damaged", "the server's copy of this file is missing or damaged; send it whole to replace it")
        }
        guard let size = held.storedSize, size > 0 else {
            throw APIError(.conflict, "not_stored", "the server does not store this file; send it whole")
        }
        return (address, size)
    }

    /// The raw body (the script's upload): exactly `length` bytes, reserved against `team`'s quota
    /// first (unless it is `declaring` an address whose bytes the server stores), then streamed to
    /// disk and checked, against the declared address too.
    ///
    /// A declared address the store holds at `length` bytes is answered without reading the body,
    /// as the API's `PUT` of a stored blob is: nothing is written, so a declaration, which costs no
    /// quota, cannot hold disk space (or, its lease naming the blob, keep another team's unused blob
    /// from collection) while a body trickles in. ``keep(_:size:model:team:collection:req:)`` still
    /// makes a version only of this team's model (``ModelVersions``).
    private func receiveBody(_ req: Request, length: Int64, declaring declared: String?, team: TeamRecord) async throws -> (String, Int64) {
        var intake = BlobIntake(size: length)
        var lease: LeaseKeeper
        if let declared {
            // A registered blob's size is known (one address has one size): a body of another size
            // could not hash to it, refused before anything is written, as the API's PUT is.
            if let registered = try await BlobRecord.find(declared, on: req.db), registered.size != length {
                throw APIError(.unprocessableEntity, "digest_mismatch", "a blob with this SHA-256 has \(registered.size) bytes, not \(length)")
            }
            // The charge and whether the body is needed, on one read under the lease naming the blob.
            let (record, held) = try await takeLease(declaring: declared, req: req)
            if held.isStored(at: length) { return (declared, length) }
            if let teamQuota { try await TeamQuota(limit: teamQuota).admitUpload(of: held, size: length, for: team, on: req.db, reservingOn: record) }
            lease = try LeaseKeeper(record, lifetime: leaseLifetime, on: req.db, logger: req.logger)
        } else {
            lease = try await takeLease(reserving: length, for: team, req: req)
        }
        let upload = try await store.beginUpload(for: nil, by: try req.user().userID)
        do {
            try await intake.receive(req.body, into: upload, keeping: lease)
            let address = try intake.finish()
            if let declared, address != declared {
                throw APIError(.unprocessableEntity, "digest_mismatch", "the file's SHA-256 differs from the \(Self.declaredAddressHeader) it was sent with")
            }
            try await publish(upload, as: address, keeping: &lease, req: req)
            return (address, intake.received)
        } catch {
            await upload.discard()
            throw error
        }
    }

    /// The streamed form (no script): `size` bytes reserved against `team`'s quota first, then its
    /// file part streamed to disk and checked, its fields kept.
    private func receiveForm(_ req: Request, reserving size: Int64, team: TeamRecord) async throws -> (String, Int64, [String: String]) {
        guard let boundary = MultipartModelForm.boundary(of: req), let csrf = req.storage[DeferredCSRF.self] else {
            throw DashboardError.csrfRefused
        }
        var form = MultipartModelForm(boundary: boundary, csrf: csrf)
        var intake = BlobIntake(atMost: maximumSize)
        // Reserved before the `csrf` field (in the body) is read: a forged form carries no session
        // (SameSite=Strict), and one that did would hold the reservation only until its fields end.
        var lease = try await takeLease(reserving: size, for: team, req: req)
        let upload = try await store.beginUpload(for: nil, by: try req.user().userID)
        do {
            try await intake.receive(req.body, into: upload, keeping: lease) { try form.feed($0) }
            try form.finish()
            let address = try intake.finish()
            try await publish(upload, as: address, keeping: &lease, req: req)
            return (address, intake.received, form.fields)
        } catch {
            req.storage[UploadFields.self] = form.fields
            await upload.discard()
            throw error
        }
    }

    /// Moves a checked upload into the store under its lease, which names the blob from here on:
    /// blob collection never removes a leased blob, so it stays until
    /// ``keep(_:size:model:team:collection:req:)`` has registered it, and the quota the upload
    /// reserved stays reserved until then (the blob counts instead once registered).
    private func publish(_ upload: any BlobUpload, as address: String, keeping lease: inout LeaseKeeper, req: Request) async throws {
        try await lease.name(address)
        try await CollectionHold.waitUntilReleased(address, on: req.db)
        try await upload.publish(as: address)
    }

    /// Registers the blob and the collection's model version of it (reused when it exists).
    ///
    /// The upload is audited only once the version exists: a container the version checks refuse
    /// (a passphrase container, another team's or a revoked key) is not recorded as uploaded; its
    /// lease is released (``upload(req:)``), so blob collection removes it after the grace period.
    private func keep(_ address: String, size: Int64, model: String, team: TeamRecord, collection: CollectionRecord, req: Request) async throws -> Uploaded {
        let known = try await BlobRecord.find(address, on: req.db) != nil
        // A blob the server knows restarts its grace period only once it proved to be this
        // team's model (``ModelVersions`` marks it): stored blobs are public, and another
        // team's form could otherwise keep any of them, and its owner's quota, for ever.
        if !known { try await BlobController.register(address, size: size, team: team, on: req.db) }
        let versions = ModelVersions(collection: collection, store: store, actor: try req.user().name, database: req.db)
        let id = try await versions.resolve([model: address])[model]!
        guard let version = try await ModelVersionRecord.find(id, on: req.db) else { throw APIError.notFound("model version") }
        if !known {
            try await Audit.record(on: req.db, teamID: team.id, action: "blob.upload", actor: try req.user().name, target: address, outcome: "ok")
        }
        await releaseLease(req)
        return Uploaded(sha256: address, size: version.size, keyID: version.keyID, label: ModelChoice(version).label)
    }
}

/// The fields of a form upload read before it was refused, to show its page again.
private enum UploadFields: StorageKey {
    typealias Value = [String: String]
}

/// A responder that only throws `error`: runs the dashboard's error page for an error caught early.
private struct Throwing: AsyncResponder {
    let error: any Error
    func respond(to request: Request) async throws -> Response { throw error }
}
