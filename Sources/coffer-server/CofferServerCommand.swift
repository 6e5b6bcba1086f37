import ArgumentParser
import CofferFormat
import CofferServer
import Foundation

/// `coffer-server`: the Coffer server. `serve` (the default) runs it; `public-key` prints its key.
@main
struct CofferServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer-server",
        abstract: "The Coffer server: teams, apps, model keys, key delivery, model storage, collections and signed manifests.",
        subcommands: [Serve.self, Check.self, PublicKey.self, RotateMasterKey.self, CollectBlobs.self, AttestationCommand.self],
        defaultSubcommand: Serve.self
    )
}

/// Flags shared by the subcommands; each falls back to its variable, then the default.
struct ServerOptions: ParsableArguments {
    @Option(help: "Data folder: SQLite database, blobs, master key (env COFFER_DATA_DIR; default ./coffer-data).")
    var dataDir: String?

    @Option(help: "The least severe log lines written: trace, debug, info, notice, warning, error or critical (env LOG_LEVEL; default info).")
    var logLevel: String?

    @Option(help: "How log lines are written on stderr: text, or json (one object per line) (env LOG_FORMAT; default text).")
    var logFormat: String?

    /// The configuration from the variables and these flags plus `flags` (flag name → text); then
    /// the process's log is set up by it (swift-log, once). `quietLog`: unless a log level is given,
    /// only critical lines (for a command whose output is its answer).
    ///
    /// A setting that is not valid prints one line naming it and what it accepts, and exits with
    /// ``exitInvalidSetting`` before anything is written (no data folder is made).
    func configuration(flags: [String: String?] = [:], quietLog: Bool = false) throws -> ServerConfiguration {
        var given = flags.compactMapValues { $0 }
        if let dataDir { given["--data-dir"] = dataDir }
        if let logLevel { given["--log-level"] = logLevel }
        if let logFormat { given["--log-format"] = logFormat }
        let configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration.fromEnvironment(flags: given)
        } catch {
            FileHandle.standardError.write(Data("coffer-server: \(error)\n".utf8))
            throw ExitCode(Self.exitInvalidSetting)
        }
        let levelGiven = logLevel != nil || !(ProcessInfo.processInfo.environment["LOG_LEVEL"] ?? "").isEmpty
        ServerLogging.bootstrap(configuration, quiet: quietLog && !levelGiven)
        return configuration
    }

    /// The exit code for a setting that is not valid: 78, sysexits' EX_CONFIG.
    static let exitInvalidSetting: Int32 = 78
}

/// Where `serve` listens (and what `check` checks).
struct ListenOptions: ParsableArguments {
    @Option(help: "Address to listen on (env COFFER_HOSTNAME; default 127.0.0.1).")
    var hostname: String?

    // Text, read by the same strict rules as the variables (one line on a bad value, not a usage screen).
    @Option(help: "Port to listen on, 0...65535 (env COFFER_PORT; default 8080).")
    var port: String?

    @Option(help: "Also serve devices' manifest requests on this port, through a lean handler (env COFFER_DEVICE_PORT; default: none).")
    var devicePort: String?

    /// The options as the configuration reads flags.
    var flags: [String: String?] { ["--hostname": hostname, "--port": port, "--device-port": devicePort] }
}

/// `coffer-server serve`: listens until SIGINT or SIGTERM.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server (the default).")

    @OptionGroup var options: ServerOptions
    @OptionGroup var listen: ListenOptions

    func run() async throws {
        let configuration = try options.configuration(flags: listen.flags)
        // Vapor's per-route request counts and durations go to the registry /metrics shows.
        ProcessMetrics.bootstrap()
        do {
            try await Server.run(configuration)
        } catch {
            throw ExitCode(1)
        }
    }
}

/// `coffer-server check`: verifies a configuration without changing anything.
struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the configuration serve would use: settings, listening address, data and blob folders, keys, database.",
        discussion: """
            Reads the same flags and COFFER_* variables as serve and changes nothing. Reports what \
            would stop serve at start (the address, the data folder, the bucket, the master key, a \
            bootstrap-token file left from another database), with serve's own line where serve has \
            one. Prints one line per problem on stderr and exits with 78 (a setting it cannot use \
            also exits with 78), or prints a short summary and exits with 0. Never prints a key, \
            token or password.
            """
    )

    @OptionGroup var options: ServerOptions
    @OptionGroup var listen: ListenOptions

    func run() async throws {
        // Its lines are its answer: the log says nothing unless a level is asked for.
        let configuration = try options.configuration(flags: listen.flags, quietLog: true)
        let check = await ConfigurationCheck.run(configuration)
        guard check.problems.isEmpty else {
            for problem in check.problems { FileHandle.standardError.write(Data("coffer-server: \(problem)\n".utf8)) }
            throw ExitCode(ServerOptions.exitInvalidSetting)
        }
        print("OK: " + check.facts.joined(separator: "; "))
    }
}

/// `coffer-server rotate-master-key --new-key-file FILE`: re-wraps every model key (servers stopped).
struct RotateMasterKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-master-key",
        abstract: "Re-encrypt every model key under a new master key (run with the servers stopped).",
        discussion: """
            FILE holds the new 32-byte master key in base64 (make one with: openssl rand -base64 32 \
            > new.key; chmod 600 new.key). A FILE that is not yours (or root's) or that others may \
            read or write is refused before anything is read, exit 77 (66 if it is not a file). \
            DATA_DIR/master.key and master.key.next are held to the same rule, as serve holds \
            them (exit 77; chmod 600 them, and chown them to this account if they are not its own). \
            With DATA_DIR/master.key the new key is written to \
            DATA_DIR/master.key.next before the database changes and moved over master.key after; \
            if that is interrupted, the next start (or rotation) finishes or undoes it. With \
            COFFER_MASTER_KEY, set the variable to the new key before restarting. A server still \
            running with the old key stores and delivers no key (503) until restarted. See docs/operations.md.
            """
    )

    @OptionGroup var options: ServerOptions

    @Option(help: "A file holding the new master key, base64.")
    var newKeyFile: String

    func run() async throws {
        let configuration = try options.configuration()
        do {
            print(try await Server.rotateMasterKey(configuration, newKeyFile: newKeyFile))
        } catch let refused as RefusedSecretFile {
            // The CLI's codes for its secret files: 66 (EX_NOINPUT), 77 (EX_NOPERM).
            FileHandle.standardError.write(Data("coffer-server: \(refused)\n".utf8))
            throw ExitCode(refused.problem == .notRegular ? 66 : 77)
        } catch {
            FileHandle.standardError.write(Data("coffer-server: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

/// `coffer-server collect-blobs`: removes unreferenced blobs past their grace period, now.
struct CollectBlobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collect-blobs",
        abstract: "Remove blobs no deployment references and nobody uploaded within the grace period (also runs hourly in serve)."
    )

    @OptionGroup var options: ServerOptions

    @Option(help: "Keep unreferenced blobs uploaded within this many hours (env COFFER_BLOB_GRACE_HOURS; default 168).")
    var graceHours: String?

    func run() async throws {
        let configuration = try options.configuration(flags: ["--grace-hours": graceHours])
        do {
            print(try await Server.collectBlobs(configuration))
        } catch {
            FileHandle.standardError.write(Data("coffer-server: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

/// `coffer-server public-key`: prints the manifest-signing public key apps pin.
struct PublicKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "public-key",
        abstract: "Print the server's manifest-signing public key (Ed25519, raw 32 bytes, base64) for apps to pin.",
        discussion: "Reads the same data folder, database and master key as serve (COFFER_* variables); creates the key if the server never started."
    )

    @OptionGroup var options: ServerOptions

    @Flag(help: "Print the algorithm, key ID and key as JSON.")
    var json = false

    func run() async throws {
        let configuration = try options.configuration()
        do {
            let key = try await Server.signingPublicKey(configuration)
            if json {
                print("{\"algorithm\":\"ed25519\",\"keyID\":\"\(key.keyID)\",\"publicKey\":\"\(key.publicKey)\"}")
            } else {
                print(key.publicKey)
            }
        } catch {
            FileHandle.standardError.write(Data("coffer-server: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
