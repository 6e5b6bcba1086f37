import Foundation
import Vapor

extension Server {
    /// `coffer-server attestation update-revocations FILE`: stores Google's attestation status
    /// list (JSON) for every instance; nothing is stored if it cannot be read. Returns one line.
    public static func updateRevocations(_ configuration: ServerConfiguration, json: [UInt8]) async throws -> String {
        let app = try await Application.make(Environment(name: "production", arguments: ["coffer-server"]))
        do {
            try await configureDatabase(app, configuration)
            let count = try await AttestationRevocations.store(json, on: app.db)
            try await app.asyncShutdown()
            return "stored the attestation revocation list: \(count) revoked or suspended certificates; running servers use it within a minute"
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
    }
}
