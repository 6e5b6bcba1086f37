import ArgumentParser
import CofferFormat

/// `coffer`: seal, open and inspect models.
@main
struct CofferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "Seal machine-learning models with keys you hold, and open them again.",
        discussion: """
            Exit codes: 0 success; 64 usage error; 65 wrong key or passphrase, a damaged or \
            tampered file, or a request the server refused as invalid; 66 input missing or \
            unreadable (or HTTP 404); 69 server unreachable or failing; 73 output cannot be created \
            (or exists: use --force); 74 other I/O error; 75 rate limited; 76 unexpected server \
            answer; 77 not logged in or not allowed; 130 interrupted.
            """,
        version: CofferVersion.current,
        subcommands: [Encrypt.self, Decrypt.self, Inspect.self, KeyCommand.self, Migrate.self, LoginCommand.self, LogoutCommand.self, TeamCommand.self, TokenCommand.self, MemberCommand.self, InvitationCommand.self, AppCommand.self, AuditCommand.self, BlobCommand.self, CollectionCommand.self, DeploymentCommand.self, ManifestCommand.self, DeviceCommand.self, SyncCommand.self, OpenCommand.self, ReportCommand.self]
    )

    static func main() {
        ProcessTuning.apply()
        SignalCleanup.install()
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let failure as CLIFailure {
            failure.report()
        } catch {
            if let failure = CLIFailure(error) { failure.report() }
            AtomicOutput.discardAllPending()
            exit(withError: error)
        }
    }
}

/// The version `coffer --version` prints.
enum CofferVersion {
    static let current = "0.1.0"
}
