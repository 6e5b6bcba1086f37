import ArgumentParser
import CofferServer

/// `coffer-server`: the Coffer server. `serve` (the default) runs it; `public-key` prints its key.
@main
struct CofferServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer-server",
        abstract: "The Coffer server: teams, apps, model keys, key delivery and model storage.",
        subcommands: [Serve.self],
        defaultSubcommand: Serve.self
    )
}

/// Flags shared by the subcommands; each falls back to its COFFER_* variable, then the default.
struct ServerOptions: ParsableArguments {
    @Option(help: "Data folder: SQLite database, blobs, master key (env COFFER_DATA_DIR; default ./coffer-data).")
    var dataDir: String?

    func configuration() -> ServerConfiguration {
        var configuration = ServerConfiguration.fromEnvironment()
        if let dataDir { configuration.dataDirectory = dataDir }
        return configuration
    }
}

/// `coffer-server serve`: listens until SIGINT or SIGTERM.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server (the default).")

    @OptionGroup var options: ServerOptions

    @Option(help: "Address to listen on (env COFFER_HOSTNAME; default 127.0.0.1).")
    var hostname: String?

    @Option(help: "Port to listen on (env COFFER_PORT; default 8080).")
    var port: Int?

    func run() async throws {
        var configuration = options.configuration()
        if let hostname { configuration.hostname = hostname }
        if let port { configuration.port = port }
        do {
            try await Server.run(configuration)
        } catch {
            throw ExitCode(1)
        }
    }
}
