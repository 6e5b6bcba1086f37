import CofferAttestation
import Fluent
import Vapor

/// `POST /v1/device/attestation/challenge`: a single-use challenge for an app's device to bind
/// into its attestation (docs/ATTESTATION.md). Only apps whose policy is not `none` get one.
///
/// Refusals in the order of key delivery's: the client address's budget, then the credential.
/// Nothing is written (``AttestationChallenges`` makes challenges the server can check later), so
/// there is no app-wide budget or table for the holder of one extracted credential to exhaust.
struct AttestationController: RouteCollection {
    struct ChallengeRequest: Content {
        let appID: UUID
        let credential: String
    }

    struct ChallengeResponse: Content {
        /// 32 bytes, base64: opaque to the device.
        let challenge: String
        let expiresAt: Date
    }

    let credentials: AppCredentials
    let challenges: AttestationChallenges
    let perAddress: RateLimiter

    func boot(routes: any RoutesBuilder) throws {
        routes.post("v1", "device", "attestation", "challenge", use: challenge)
    }

    func challenge(req: Request) async throws -> Response {
        if let wait = perAddress.acquire("address:" + AddressBudget.key(req.clientAddress)) { throw DeliveryController.tooMany(wait) }
        let body = try req.content.decode(ChallengeRequest.self)
        let app = try await credentials.authenticate(appID: body.appID, credential: body.credential, address: req.clientAddress, on: req.db)
        guard app.attestation.policy != .none else {
            throw APIError.conflict("this app's attestation policy is none: its key requests need no attestation")
        }
        let issued = challenges.issue(for: app.id)
        return try await ChallengeResponse(challenge: Data(issued.challenge).base64EncodedString(), expiresAt: issued.expiresAt)
            .encodeResponse(status: .created, for: req)
    }
}
