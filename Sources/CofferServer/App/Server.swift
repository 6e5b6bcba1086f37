import Vapor

/// Runs a Coffer server in the foreground until SIGINT or SIGTERM.
public enum Server {
    /// Configures and runs the server; a failure to start is logged as one line and rethrown.
    ///
    /// On SIGINT or SIGTERM both ports stop accepting, answer the requests in flight and close
    /// their idle keep-alive connections (``Application/drainListeners()``); then the periodic work
    /// flushes what it holds and the database closes.
    public static func run(_ configuration: ServerConfiguration) async throws {
        let environment = Environment(name: "production", arguments: ["coffer-server", "serve"])
        let app = try await Application.make(environment)
        do {
            try await configure(app, configuration)
            try await app.execute()
        } catch {
            app.logger.critical("coffer-server cannot start: \(String(describing: error))")
            await app.drainListeners()
            try? await app.asyncShutdown()
            throw error
        }
        await app.drainListeners()
        try await app.asyncShutdown()
    }
}
