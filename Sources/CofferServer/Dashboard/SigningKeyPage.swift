import Vapor

/// The server's manifest-signing public key, to pin in an app (the SDK refuses manifests signed by
/// any other key). Public information: any signed-in member sees it.
struct SigningKeyPage: RouteCollection {
    struct Page: Encodable, Sendable {
        let chrome: Chrome
        let algorithm: String
        let keyID: String
        let publicKey: String
    }

    let signer: ManifestSigner

    func boot(routes: any RoutesBuilder) throws {
        routes.get("dashboard", "signing-key", use: show)
    }

    func show(req: Request) async throws -> Response {
        _ = try req.user()
        return try await req.page("signing-key", Page(
            chrome: try Chrome.make(req, title: "Signing key", section: "signing-key"), algorithm: "Ed25519",
            keyID: signer.keyID, publicKey: signer.publicKey.rawRepresentation.base64EncodedString()))
    }
}
