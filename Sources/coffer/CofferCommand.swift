import ArgumentParser
import CofferFormat

/// `coffer`: seal, open and inspect models.
@main
struct CofferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "Seal machine-learning models with keys you hold, and open them again.",
        discussion: """
            Exit codes: 0 success; 64 usage error; 65 wrong key or passphrase, or a damaged or \
            tampered file; 66 input missing or unreadable; 73 output cannot be created (or exists: \
            use --force); 74 other I/O error.
            """,
        version: CofferVersion.current,
        subcommands: [Encrypt.self, Decrypt.self, Inspect.self, KeyCommand.self, Migrate.self]
    )

    static func main() {
        ProcessTuning.apply()
        SignalCleanup.install()
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let failure as CLIFailure {
            failure.report()
        } catch let error as ExitCode {
            exit(withError: error)
        } catch {
            if let failure = CLIFailure(error) {
                failure.report()
            } else {
                exit(withError: error)
            }
        }
    }
}

/// The version `coffer --version` prints.
enum CofferVersion {
    static let current = "0.1.0"
}
