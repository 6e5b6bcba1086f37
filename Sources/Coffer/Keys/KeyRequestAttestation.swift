import CofferFormat
#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// The attestation evidence of one key request (docs/ATTESTATION.md): the install's first request
/// attests a new key over a fresh server challenge and the device's X25519 key; later ones assert
/// with that key. The key's identifier and counter live in the key store.
struct KeyRequestAttestation: Sendable {
    let attestor: any DeviceAttestor
    let api: DeviceAPI
    let store: any KeyStore

    /// The evidence to send with a request for `keyID` sealed to `devicePublicKey`.
    func evidence(for keyID: String, devicePublicKey: [UInt8]) async throws -> DeviceAPI.Evidence {
        if let attested = try store.load(KeyStoreNames.attestedKey), !attested.isEmpty {
            let counter = try nextCounter()
            let clientData = Data(AttestationClientData.keyRequest(keyID: keyID, devicePublicKey: devicePublicKey))
            let proof = try await attestor.assert(keyID: attested, clientData: clientData, counter: counter)
            if attestor.format == "apple-app-attest" {
                return DeviceAPI.Evidence(format: attestor.format, keyID: attested.base64EncodedString(), assertion: proof.base64EncodedString())
            }
            return DeviceAPI.Evidence(format: attestor.format, keyID: attested.base64EncodedString(), signature: proof.base64EncodedString(),
                                      counter: Int64(counter))
        }
        let challenge: [UInt8]
        do {
            challenge = try await api.attestationChallenge()
        } catch {
            throw error.keyFailure(keyID)
        }
        let clientData = AttestationClientData.attestation(challenge: challenge, devicePublicKey: devicePublicKey)
        let statement = try await attestor.attestNewKey(clientDataHash: Data(SHA256.hash(data: clientData)))
        return DeviceAPI.Evidence(format: attestor.format, keyID: statement.keyID.base64EncodedString(),
                                  challenge: Data(challenge).base64EncodedString(),
                                  attestationObject: statement.attestationObject?.base64EncodedString(),
                                  certificateChain: statement.certificateChain?.map { $0.base64EncodedString() },
                                  attestedKey: statement.keyID)
    }

    /// After the server's answer: keeps a newly attested key once the server accepted it, and
    /// forgets the kept one when the server no longer knows it (the next request attests again).
    func settle(_ evidence: DeviceAPI.Evidence, refusal code: String?) throws {
        if let attested = evidence.attestedKey, code == nil {
            try store.save(KeyStoreNames.attestedKey, attested)
            try store.save(KeyStoreNames.attestationCounter, Data("0".utf8))
        }
        if code == "attestation_unknown_key" || code == "attestation_device_key_mismatch" {
            try store.remove(KeyStoreNames.attestedKey)
            try store.remove(KeyStoreNames.attestationCounter)
        }
    }

    /// The next counter for an `android-key-attestation` signature, kept before it is used so a
    /// crash never makes the device reuse one.
    private func nextCounter() throws -> UInt32 {
        let stored = try store.load(KeyStoreNames.attestationCounter).flatMap { UInt32(String(decoding: $0, as: UTF8.self)) } ?? 0
        let (next, overflow) = stored.addingReportingOverflow(1)
        guard !overflow else { throw CofferError.invalidConfiguration("the attested key's counter is exhausted; remove it to attest a new key") }
        try store.save(KeyStoreNames.attestationCounter, Data(String(next).utf8))
        return next
    }
}

extension ServerFailure {
    /// The same, as a failure to get model key `keyID`.
    func keyFailure(_ keyID: String) -> any Error {
        switch self {
        case .answer(_, let code, let reason): return CofferError.keyRefused(keyID: keyID, code: code, reason: reason)
        case .cancelled: return CancellationError()
        default: return CofferError.keyFetchFailed(keyID: keyID, reason: cause.description)
        }
    }
}
