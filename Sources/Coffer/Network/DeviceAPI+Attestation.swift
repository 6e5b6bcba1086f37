import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DeviceAPI {
    /// The attestation evidence sent with a key request (docs/ATTESTATION.md, "Key requests").
    struct Evidence: Encodable, Sendable {
        var format: String
        var keyID: String
        var challenge: String?
        var attestationObject: String?
        var certificateChain: [String]?
        var assertion: String?
        var signature: String?
        var counter: Int64?
        /// A newly attested key's identifier, kept once the server accepts it; never sent.
        var attestedKey: Data?

        init(format: String, keyID: String, challenge: String? = nil, attestationObject: String? = nil, certificateChain: [String]? = nil,
             assertion: String? = nil, signature: String? = nil, counter: Int64? = nil, attestedKey: Data? = nil) {
            self.format = format
            self.keyID = keyID
            self.challenge = challenge
            self.attestationObject = attestationObject
            self.certificateChain = certificateChain
            self.assertion = assertion
            self.signature = signature
            self.counter = counter
            self.attestedKey = attestedKey
        }

        enum CodingKeys: String, CodingKey {
            case format, keyID, challenge, attestationObject, certificateChain, assertion, signature, counter
        }
    }

    /// A single-use challenge for an attestation (`POST /v1/device/attestation/challenge`).
    func attestationChallenge() async throws(ServerFailure) -> [UInt8] {
        struct Body: Encodable { let appID: String; let credential: String }
        struct Answer: Decodable { let challenge: String }
        var request = self.request(["v1", "device", "attestation", "challenge"], query: [])
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try? JSONEncoder().encode(Body(appID: configuration.appID, credential: configuration.credential))
        let (response, body) = try await send(request, limit: 4 << 10)
        guard response.statusCode == 201 else { throw Self.failure(response, body) }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: body), let challenge = Data(base64Encoded: answer.challenge),
              challenge.count == 32
        else { throw .answer(status: response.statusCode, code: "protocol_error", reason: "the answer is not an attestation challenge") }
        return Array(challenge)
    }
}
