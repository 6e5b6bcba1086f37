import Vapor

/// Runs a Coffer server in the foreground until SIGINT or SIGTERM.
public enum Server {
    /// Configures and runs the server; a failure to start is logged as one line and rethrown.
    public static func run(_ configuration: ServerConfiguration) async throws {
        let environment = Environment(name: "production", arguments: ["coffer-server", "serve"])
        let app = try await Application.make(environment)
        do {
            try await configure(app, configuration)
            try await app.execute()
        } catch {
            app.logger.critical("coffer-server cannot start: \(String(describing: error))")
            try? await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }
}
