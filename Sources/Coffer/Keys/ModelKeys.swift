import CofferFormat
#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// Model keys for this device: from the key store, else fetched once from the server sealed to
/// the device's X25519 key (docs/KEY-DELIVERY.md) and kept, so later opens work offline.
struct ModelKeys: Sendable {
    let api: DeviceAPI
    let store: any KeyStore
    let configuredDeviceID: String?

    /// The key `keyID` that opens model `name`, whose container has `header`.
    ///
    /// A key is kept only once it opens `header`: HPKE's base mode does not say who sealed a
    /// delivered key, so whoever can answer in the server's place could otherwise plant a wrong
    /// key for good. A kept key that does not open the model (planted earlier, damaged) is
    /// dropped and fetched again once — but only for a `header` that is known to be the model's:
    /// `verifiedHeader` is asked when a key (kept or delivered) does not open it, and says whether
    /// the header is the model's (read from a file that still has the SHA-256 the signed manifest
    /// vouched for) or throws (a cached file damaged since). A header read while the file still
    /// downloads is only the sender's word: a kept key that does not open it is left alone, and the
    /// key is refused (``CofferError/modelInvalid(name:reason:)``).
    func key(_ keyID: String, for name: String, opening header: ContainerHeader,
             verifiedHeader: () throws -> Bool) async throws -> ModelKey {
        guard !keyID.isEmpty, keyID.utf8.count <= ContainerHeader.maximumKeyIDLength, KeyStoreNames.isValid(KeyStoreNames.modelKey(keyID)) else {
            throw CofferError.modelInvalid(name: name, reason: "it names no usable key ID")
        }
        if let stored = try store.load(KeyStoreNames.modelKey(keyID)), stored.count == ModelKey.byteCount {
            let key = try ModelKey(id: keyID, name: name, created: Date(), key: SymmetricKey(data: stored))
            if SealedModel.keyOpens(header, with: .modelKey(key)) { return key }
            // A hostile mirror's forged header must not cost the device the key its cached models need.
            guard try verifiedHeader() else { throw CofferError.modelInvalid(name: name, reason: "its header does not open with the kept key") }
            try store.remove(KeyStoreNames.modelKey(keyID))
        }
        let device = try deviceID()
        let deviceKey = try self.deviceKey()
        let sealed = try await deliver(keyID, deviceID: device, deviceKey: deviceKey.publicKey)
        let material: SymmetricKey
        do {
            material = try KeyDelivery.open(sealed, keyID: keyID, deviceID: device, using: deviceKey)
        } catch {
            throw CofferError.keyRefused(keyID: keyID, code: "undecryptable", reason: "the delivered key does not open with this device's key")
        }
        let key = try ModelKey(id: keyID, name: name, created: Date(), key: material)
        guard SealedModel.keyOpens(header, with: .modelKey(key)) else {
            _ = try verifiedHeader()
            throw CofferError.keyRefused(keyID: keyID, code: "wrong_key", reason: "the delivered key does not open model \(name); it was not kept")
        }
        try material.withUnsafeBytes { try store.save(KeyStoreNames.modelKey(keyID), Data($0)) }
        return key
    }

    /// The sealed key from the server, with attestation evidence when an attestor is configured.
    /// An attested key the server no longer knows is forgotten and a new one attested, once.
    private func deliver(_ keyID: String, deviceID: String, deviceKey: Curve25519.KeyAgreement.PublicKey) async throws -> KeyDelivery.Sealed {
        guard let attestor = api.configuration.attestor else {
            do {
                return try await api.deliverKey(keyID, deviceID: deviceID, devicePublicKey: deviceKey)
            } catch {
                throw error.keyFailure(keyID)
            }
        }
        let attestation = KeyRequestAttestation(attestor: attestor, api: api, store: store)
        for attempt in 1...2 {
            let evidence = try await attestation.evidence(for: keyID, devicePublicKey: Array(deviceKey.rawRepresentation))
            let failure: ServerFailure
            do throws(ServerFailure) {
                let sealed = try await api.deliverKey(keyID, deviceID: deviceID, devicePublicKey: deviceKey, evidence: evidence)
                try? attestation.settle(evidence, refusal: nil)
                return sealed
            } catch {
                failure = error
            }
            if case .answer(_, let code, _) = failure {
                try attestation.settle(evidence, refusal: code)
                if attempt == 1, code == "attestation_unknown_key" || code == "attestation_device_key_mismatch" { continue }
            }
            throw failure.keyFailure(keyID)
        }
        throw CofferError.keyFetchFailed(keyID: keyID, reason: "attestation did not succeed")
    }

    /// The configured device ID, else the one in the key store, else a new random one kept there.
    func deviceID() throws -> String {
        if let configuredDeviceID { return configuredDeviceID }
        if let stored = try store.load(KeyStoreNames.deviceID), let text = String(data: stored, encoding: .utf8),
           (1...200).contains(text.utf8.count), !text.contains("|") {
            return text
        }
        let made = UUID().uuidString.lowercased()
        try store.save(KeyStoreNames.deviceID, Data(made.utf8))
        return made
    }

    /// The device's X25519 key, made on first use and kept in the key store.
    func deviceKey() throws -> Curve25519.KeyAgreement.PrivateKey {
        if let stored = try store.load(KeyStoreNames.deviceKey), let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: stored) {
            return key
        }
        let key = Curve25519.KeyAgreement.PrivateKey()
        try store.save(KeyStoreNames.deviceKey, key.rawRepresentation)
        return key
    }
}
