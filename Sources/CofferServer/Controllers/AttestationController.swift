import CofferAttestation
import Fluent
import Vapor

/// `POST /v1/device/attestation/challenge`: a single-use challenge for an app's device to bind
/// into its attestation (docs/ATTESTATION.md). Only apps whose policy is not `none` get one.
///
/// Refusals in the order of key delivery's: the client address's budget (nothing written), the
/// credential, then the app's budget, so neither an anonymous flood nor a leaked old credential
/// fills the challenge table.
struct AttestationController: RouteCollection {
    struct ChallengeRequest: Content {
        let appID: UUID
        let credential: String
    }

    struct ChallengeResponse: Content {
        /// 32 random bytes, base64.
        let challenge: String
        let expiresAt: Date
    }

    let credentials: AppCredentials
    let perAddress: RateLimiter
    let perApp: RateLimiter

    func boot(routes: any RoutesBuilder) throws {
        routes.post("v1", "device", "attestation", "challenge", use: challenge)
    }

    func challenge(req: Request) async throws -> Response {
        if let wait = perAddress.acquire("address:" + AddressBudget.key(req.clientAddress)) { throw DeliveryController.tooMany(wait) }
        let body = try req.content.decode(ChallengeRequest.self)
        let app = try await credentials.authenticate(appID: body.appID, credential: body.credential, address: req.clientAddress, on: req.db)
        if let wait = perApp.acquire("app:\(app.id)") { throw DeliveryController.tooMany(wait) }
        guard app.attestation.policy != .none else {
            throw APIError.conflict("this app's attestation policy is none: its key requests need no attestation")
        }
        let issued = try await AttestationChallenges.issue(for: app.id, on: req.db)
        return try await ChallengeResponse(challenge: Data(issued.challenge).base64EncodedString(), expiresAt: issued.expiresAt)
            .encodeResponse(status: .created, for: req)
    }
}
