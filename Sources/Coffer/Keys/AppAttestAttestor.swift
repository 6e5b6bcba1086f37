#if canImport(DeviceCheck)
#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import DeviceCheck
import Foundation

/// App Attest (DCAppAttestService, in every platform version the package supports), for apps whose policy
/// is `apple-app-attest`. The app needs the App Attest capability; its environment
/// (development or production) must be the one the server's policy names. Apple answers
/// `isSupported` false on every Mac (native, Catalyst, and iPad apps on Apple silicon) and in
/// simulators: check ``isSupported`` before choosing this attestor.
public struct AppAttestAttestor: DeviceAttestor {
    /// `apple-app-attest`.
    public var format: String { "apple-app-attest" }

    /// An attestor over `DCAppAttestService.shared`.
    public init() {}

    /// Whether this device supports App Attest (not the Simulator, not older hardware).
    public static var isSupported: Bool { DCAppAttestService.shared.isSupported }

    /// Generates an App Attest key and attests it over `clientDataHash` (Apple's servers are asked).
    public func attestNewKey(clientDataHash: Data) async throws -> AttestationStatement {
        let service = DCAppAttestService.shared
        let keyID = try await service.generateKey()
        let object = try await service.attestKey(keyID, clientDataHash: clientDataHash)
        guard let raw = Data(base64Encoded: keyID) else { throw CofferError.invalidConfiguration("App Attest returned a key ID that is not base64") }
        return AttestationStatement(keyID: raw, attestationObject: object)
    }

    /// An assertion over SHA-256(`clientData`); App Attest keeps its own counter, so `counter` is unused.
    public func assert(keyID: Data, clientData: Data, counter: UInt32) async throws -> Data {
        let hash = Data(SHA256.hash(data: clientData))
        return try await DCAppAttestService.shared.generateAssertion(keyID.base64EncodedString(), clientDataHash: hash)
    }
}
#endif
