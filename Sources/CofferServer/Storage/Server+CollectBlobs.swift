import Vapor

extension Server {
    /// `coffer-server collect-blobs`: one collection now; returns a line saying what was removed.
    public static func collectBlobs(_ configuration: ServerConfiguration) async throws -> String {
        let app = try await Application.make(Environment(name: "production", arguments: ["coffer-server"]))
        do {
            try await configureDatabase(app, configuration)
            let collector = BlobCollector(store: try await configuration.makeBlobStore(app), grace: configuration.blobGracePeriod)
            let removed = try await collector.collect(on: app.db)
            try await app.asyncShutdown()
            return "removed \(removed.count) unreferenced blobs" + (removed.isEmpty ? "" : ": " + removed.joined(separator: ", "))
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
    }
}
