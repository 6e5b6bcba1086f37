import Fluent
import Vapor

/// The manifest request apart from any HTTP stack, shared by Vapor's route
/// (``ManifestController``) and the lean device listener (``DeviceListener``).
struct ManifestEndpoint: Sendable {
    let manifests: ManifestService
    let credentials: AppCredentials
    /// Audits requests for collections the app is not bound to.
    let refusals: RefusalLog
    let metrics: ServerMetrics

    /// A request, checked: who asks, for what, as which device.
    struct Request: Sendable {
        let appID: UUID
        let credential: String
        let identifier: String
        let device: DeviceAttributes
        let ifNoneMatch: [String]
        /// The client's address (``TrustedProxies``), whose failure budget a wrong credential spends.
        let address: String
    }

    /// Reads the request's parts; 400 for a path that names no possible collection (before
    /// anything is looked up or audited: the identifier goes into the team's audit log when the
    /// app is not bound to it), 401 without usable HTTP Basic credentials, 400 for bad attributes.
    static func parse(headers: HTTPHeaders, query: String?, identifier: String, address: String) throws -> Request {
        guard (1...100).contains(identifier.utf8.count), identifier.utf8.allSatisfy(CollectionController.isIdentifierByte) else {
            throw APIError.invalid("a collection identifier is 1 to 100 ASCII letters, digits, '.', '_' or '-'")
        }
        guard let (username, password) = basicCredentials(headers.first(name: .authorization)), let appID = UUID(hexText: username) else {
            // No WWW-Authenticate challenge: FoundationNetworking's URLSession (Linux) waits forever
            // on a 401 that carries one when no delegate answers it.
            throw APIError(.unauthorized, "invalid_credential", "send the app ID and credential with HTTP Basic authentication")
        }
        let device: DeviceAttributes
        do {
            device = try DeviceAttributes(queryString: query)
        } catch {
            throw APIError.invalid(error.reason)
        }
        return Request(appID: appID, credential: password, identifier: identifier, device: device,
                       ifNoneMatch: headers[.ifNoneMatch], address: address)
    }

    /// `Basic base64(user:password)` → (user, password); nil for anything else. Byte-level, as
    /// the endpoint is hot (Vapor's `basicAuthorization` splits Characters and lower-cases).
    static func basicCredentials(_ header: String?) -> (String, String)? {
        guard let header else { return nil }
        let bytes = header.utf8
        guard bytes.count > 6, bytes.count <= 1024,
              bytes.prefix(6).map({ $0 | 0x20 }).elementsEqual("basic ".utf8)
        else { return nil }
        let encoded = Substring(bytes.dropFirst(6).drop(while: { $0 == UInt8(ascii: " ") }))
        guard let decoded = Data(base64Encoded: String(encoded)), let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return (String(decoding: decoded[..<colon], as: UTF8.self), String(decoding: decoded[(colon + 1)...], as: UTF8.self))
    }

    /// The answer from memory, or nil when the database must be asked (``answer(_:on:)``).
    func cachedAnswer(_ request: Request) throws -> ManifestService.Answer? {
        guard let teamID = credentials.cachedTeam(appID: request.appID, credential: request.credential, collection: request.identifier)
        else { return nil }
        return try manifests.cachedManifest(teamID: teamID, identifier: request.identifier, device: request.device)
    }

    /// The answer, asking the database as needed. An app gets manifests only of the collections it
    /// is bound to: any other identifier, whether the team has such a collection or not, is 403
    /// `collection_not_bound`, audited (one row a minute per app).
    ///
    /// A wrong credential or an unknown app costs the client's address one failure
    /// (``AppCredentials/check(appID:credential:address:on:)``).
    func answer(_ request: Request, on db: any Database) async throws -> ManifestService.Answer {
        let app = try await credentials.authenticate(appID: request.appID, credential: request.credential, address: request.address, on: db)
        guard app.isBound(to: request.identifier) else {
            try await refusals.record(.init(teamID: app.teamID, action: "manifest", actor: "app:\(app.id)",
                                            target: String(request.identifier.prefix(100)), reason: "collection_not_bound",
                                            deviceID: request.device.deviceID, key: "collection_not_bound|\(app.id)"), on: db)
            throw APIError.forbidden("collection_not_bound", "this app is not bound to that collection (coffer app update --collections)")
        }
        guard let answer = try await manifests.manifest(teamID: app.teamID, identifier: request.identifier, device: request.device, on: db) else {
            throw APIError(.notFound, "not_found", "no active deployment of a collection \(request.identifier.prefix(100)) for this app")
        }
        return answer
    }

    /// The response's status and headers (the body is the answer's, unless 304); counts it.
    func head(for answer: ManifestService.Answer, _ request: Request) -> (status: HTTPResponseStatus, headers: HTTPHeaders) {
        isNotModified(answer, request) ? (.notModified, answer.notModifiedHeaders) : (.ok, answer.okHeaders)
    }

    /// Whether the device already has this answer (its `If-None-Match` names the ETag); counts
    /// the answer as a 304 or a 200.
    func isNotModified(_ answer: ManifestService.Answer, _ request: Request) -> Bool {
        // The usual header is exactly the one ETag; a list is split only when it is not.
        let notModified = request.ifNoneMatch.contains { value in
            value == answer.etag || (value.contains(",") && value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == answer.etag })
        }
        metrics.manifests(status: notModified ? 304 : 200)
        return notModified
    }
}
