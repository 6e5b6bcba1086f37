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

    let endpoint: ManifestEndpoint

    func boot(routes: any RoutesBuilder) throws {
        routes.get("v1", "device", "collections", ":collection", "manifest", use: manifest)
        routes.get("v1", "signing-key", use: signingKey)
    }

    /// Answers from memory on the event loop when it can (the app and collection cached and fresh);
    /// otherwise goes to the database in a task.
    func manifest(req: Request) -> EventLoopFuture<Response> {
        do {
            let request = try ManifestEndpoint.parse(headers: req.headers, query: req.url.query, identifier: req.parameters.get("collection") ?? "",
                                                     address: req.clientAddress)
            if let answer = try endpoint.cachedAnswer(request) {
                return req.eventLoop.makeSucceededFuture(respond(answer, request))
            }
            return req.eventLoop.makeFutureWithTask {
                respond(try await endpoint.answer(request, on: req.db), request)
            }
        } catch {
            return req.eventLoop.makeFailedFuture(error)
        }
    }

    private func respond(_ answer: ManifestService.Answer, _ request: ManifestEndpoint.Request) -> Response {
        let (status, headers) = endpoint.head(for: answer, request)
        return Response(status: status, headers: headers, body: status == .ok ? .init(buffer: answer.body) : .empty)
    }

    func signingKey(req: Request) async throws -> SigningKeyView {
        SigningKeyView(algorithm: "ed25519", keyID: endpoint.manifests.signer.keyID,
                       publicKey: endpoint.manifests.signer.publicKey.rawRepresentation.base64EncodedString())
    }
}
