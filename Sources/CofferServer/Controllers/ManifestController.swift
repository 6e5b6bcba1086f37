import CofferFormat
import Vapor

/// `GET /v1/device/collections/:collection/manifest`: what a device of an app should run, signed
/// (docs/MANIFEST.md). The device authenticates with HTTP Basic (app ID as user name, credential as
/// password) and describes itself in the query (docs/TARGETING.md); an app sees only its team's
/// collections. `If-None-Match` with the ETag of the manifest it has gets 304 and no body.
///
/// `GET /v1/signing-key`: the public key that signs manifests, for anyone.
struct ManifestController: RouteCollection {
    struct SigningKeyView: Content { let algorithm: String; let keyID: String; let publicKey: String }

    let manifests: ManifestService
    let credentials: AppCredentials
    let metrics: ServerMetrics

    func boot(routes: any RoutesBuilder) throws {
        routes.get("v1", "device", "collections", ":collection", "manifest", use: manifest)
        routes.get("v1", "signing-key", use: signingKey)
    }

    /// Answers from memory on the event loop when it can (the app and collection cached and fresh);
    /// otherwise goes to the database in a task.
    func manifest(req: Request) -> EventLoopFuture<Response> {
        do {
            guard let basic = req.headers.basicAuthorization, let appID = UUID(uuidString: basic.username) else {
                // No WWW-Authenticate challenge: FoundationNetworking's URLSession (Linux) waits forever
                // on a 401 that carries one when no delegate answers it.
                throw APIError(.unauthorized, "invalid_credential", "send the app ID and credential with HTTP Basic authentication")
            }
            let device: DeviceAttributes
            do {
                device = try DeviceAttributes(query: try DeviceQuery.parse(req.url.query))
            } catch {
                throw APIError.invalid(error.reason)
            }
            let identifier = req.parameters.get("collection") ?? ""
            if let teamID = credentials.cachedTeam(appID: appID, credential: basic.password),
               let answer = try manifests.cachedManifest(teamID: teamID, identifier: identifier, device: device) {
                return req.eventLoop.makeSucceededFuture(respond(req, answer))
            }
            return req.eventLoop.makeFutureWithTask {
                let teamID = try await credentials.authenticate(appID: appID, credential: basic.password, on: req.db)
                guard let answer = try await manifests.manifest(teamID: teamID, identifier: identifier, device: device, on: req.db) else {
                    throw APIError(.notFound, "not_found", "no active deployment of a collection \(identifier.prefix(100)) for this app")
                }
                return respond(req, answer)
            }
        } catch {
            return req.eventLoop.makeFailedFuture(error)
        }
    }

    /// 304 when the device already has this manifest (`If-None-Match`), else the envelope.
    private func respond(_ req: Request, _ answer: ManifestService.Answer) -> Response {
        let notModified = req.headers[.ifNoneMatch].contains { value in
            value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == answer.etag }
        }
        let response = notModified ? Response(status: .notModified) : Response(status: .ok, body: .init(buffer: answer.body))
        if !notModified { response.headers.contentType = .json }
        response.headers.replaceOrAdd(name: .eTag, value: answer.etag)
        response.headers.replaceOrAdd(name: .cacheControl, value: "private, no-cache")
        metrics.manifests(status: notModified ? 304 : 200)
        return response
    }

    func signingKey(req: Request) async throws -> SigningKeyView {
        SigningKeyView(algorithm: "ed25519", keyID: manifests.signer.keyID,
                       publicKey: manifests.signer.publicKey.rawRepresentation.base64EncodedString())
    }
}

/// The query string of a manifest request as name → value, bounded before anything is decoded.
enum DeviceQuery {
    static func parse(_ query: String?) throws(TargetingError) -> [String: String] {
        guard let query, !query.isEmpty else { return [:] }
        guard query.utf8.count <= 8192 else { throw TargetingError(reason: "the query is longer than 8192 bytes") }
        var values: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            guard values.count < 64 else { throw TargetingError(reason: "more than 64 query parameters") }
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else {
                throw TargetingError(reason: "the query is not valid percent-encoding")
            }
            guard values[name] == nil else { throw TargetingError(reason: "\(name.prefix(64)) is given twice") }
            values[name] = value
        }
        return values
    }

    /// Form decoding (`+` is a space, `%XX` a byte) over UTF-8 bytes; nil for a bad escape or
    /// bytes that are not UTF-8. Written out rather than through Foundation's bridged NSString
    /// calls, which were a fifth of the manifest endpoint's time (docs/BENCHMARKS.md).
    static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
