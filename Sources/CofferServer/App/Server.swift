import Vapor

/// Runs a Coffer server in the foreground until SIGINT or SIGTERM.
public enum Server {
    /// Configures and runs the server; a failure to start is logged as one line and rethrown.
    ///
    /// Once it listens it logs the ``Greeting``. On SIGINT or SIGTERM both ports stop accepting,
    /// answer the requests in flight and close their idle keep-alive connections
    /// (``Application/drainListeners()``); then the periodic work flushes what it holds and the
    /// database closes.
    public static func run(_ configuration: ServerConfiguration) async throws {
        AllocatorTuning.apply()
        let environment = Environment(name: "production", arguments: ["coffer-server", "serve"])
        let app = try await Application.make(environment)
        do {
            try await configure(app, configuration)
            try await app.startup()
        } catch {
            app.logger.critical("coffer-server cannot start: \(String(describing: error))")
            await app.drainListeners()
            try? await app.asyncShutdown()
            throw error
        }
        Greeting.log(app, configuration: configuration)
        try? await app.running?.onStop.get()
        app.logger.notice("Shutting down: answering the requests in flight")
        await app.drainListeners()
        try await app.asyncShutdown()
        app.logger.notice("Stopped")
    }
}
