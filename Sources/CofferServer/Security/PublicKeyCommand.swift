import Vapor

extension Server {
    /// `coffer-server public-key`: the manifest-signing public key (raw 32 bytes, base64) that apps
    /// pin, made on the spot if the server has never started. Needs the master key and database
    /// the server uses.
    public static func signingPublicKey(_ configuration: ServerConfiguration) async throws -> (keyID: String, publicKey: String) {
        try DataFolder.prepare(configuration.dataDirectory)
        let app = try await Application.make(Environment(name: "production", arguments: ["coffer-server"]))
        do {
            try await configureDatabase(app, configuration)
            let masterKey = try await MasterKey.loadChecked(configuration, on: app.db, logger: app.logger)
            let signer = try await ManifestSigner.loadOrCreate(masterKey: masterKey, on: app.db)
            try await app.asyncShutdown()
            return (signer.keyID, signer.publicKey.rawRepresentation.base64EncodedString())
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
    }
}
