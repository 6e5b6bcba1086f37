import ArgumentParser
import Foundation

/// `coffer login`: checks a server address and API token, then saves them for the other commands.
struct LoginCommand: NetworkCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Save a Coffer server's address and your API token (credentials.json, mode 0600).",
        discussion: """
            The token is checked with the server first. It is saved in COFFER_CONFIG_DIR, else \
            $XDG_CONFIG_HOME/coffer, else ~/.config/coffer. COFFER_SERVER and COFFER_TOKEN override \
            the saved values. Prefer --token-file: a --token value is visible to other users of \
            this machine while the command runs.
            """
    )

    @Option(help: ArgumentHelp("The server, such as https://coffer.example.com.", valueName: "URL"))
    var server: String

    @Option(help: ArgumentHelp("Your API token.", valueName: "TOKEN"))
    var token: String?

    @Option(help: ArgumentHelp("A file that holds your API token; - reads it from standard input.", valueName: "FILE"))
    var tokenFile: String?

    func validate() throws {
        guard (token == nil) != (tokenFile == nil) else {
            throw ValidationError("give exactly one of --token TOKEN or --token-file FILE")
        }
    }

    func run() async throws {
        let address = try ServerAddress.parse(server)
        let secret: String
        if let tokenFile {
            secret = try APIToken.read(file: tokenFile)
        } else {
            secret = try APIToken.clean(token ?? "", from: "--token")
        }
        let client = APIClient(server: address, token: secret)
        let teams = try await client.get([API.Team].self, "v1", "teams")
        let path = try Credentials(server: address.absoluteString, token: secret).save()
        let count = teams.count == 1 ? "1 team" : "\(teams.count) teams"
        Printable.say("Logged in to \(address.absoluteString) (member of \(count)); credentials saved in \(path).")
    }
}

/// `coffer logout`: removes the saved credentials.
struct LogoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Remove the saved server address and API token."
    )

    func run() throws {
        let path = Credentials.path()
        if try Credentials.remove() {
            Printable.say("Removed \(path).")
        } else {
            Printable.say("Not logged in (no \(path)).")
        }
    }
}
