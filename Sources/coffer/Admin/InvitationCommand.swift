import ArgumentParser
import CofferFormat
import Foundation

/// `coffer invitation`: how people join teams. An owner makes an invitation and gives its code to
/// the person, who accepts it with their own account, or makes their own account with it.
struct InvitationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invitation",
        abstract: "Invite people to a team, and accept invitations.",
        subcommands: [Create.self, List.self, Revoke.self, Accept.self]
    )

    /// `coffer invitation create --team T --role R [--note N] [--days D]`.
    struct Create: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Make an invitation to a team (owners only); prints its code once."
        )

        @Option(help: "The team.")
        var team: String

        @Option(help: "owner, developer or viewer.")
        var role: MemberCommand.Role

        @Option(help: "Who it is for, as a reminder in the list (binds nothing).")
        var note: String?

        @Option(help: "Days until it expires (default: the server's, 7).")
        var days: Double?

        @Flag(help: "Print the invitation, with its code, as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let invitation = try await client.post(API.CreatedInvitation.self, ["v1", "teams", team, "invitations"],
                                                   json: API.NewInvitation(role: role.rawValue, note: note, days: days))
            if json { return print(JSONOutput.render(invitation)) }
            InvitationCommand.printCode(of: invitation)
        }
    }

    /// `coffer invitation list --team T`.
    struct List: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List a team's invitations and their state (owners only).")

        @Option(help: "The team.")
        var team: String

        @Flag(help: "Print the invitations as a JSON array.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let invitations = try await client.get([API.Invitation].self, "v1", "teams", team, "invitations")
            if json { return print(JSONOutput.render(invitations)) }
            var table = TextTable("ID", "FOR", "ROLE", "STATE", "ACCEPTED BY", "EXPIRES", "BY")
            for item in invitations { table.add(item.id, item.note, item.role, item.state, item.acceptedBy, item.expiresAt, item.createdBy) }
            print(table.render())
        }
    }

    /// `coffer invitation revoke --team T ID`.
    struct Revoke: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke a pending invitation (owners only).")

        @Option(help: "The team.")
        var team: String

        @Argument(help: ArgumentHelp("The invitation's ID (coffer invitation list).", valueName: "ID"))
        var id: String

        func run() async throws {
            let client = try APIClient.configured()
            try await client.delete("v1", "teams", team, "invitations", id)
            Printable.say("Revoked invitation \(id).")
        }
    }

    /// `coffer invitation accept (CODE | --code-file FILE) [--new-account NAME --server URL]`.
    struct Accept: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "accept",
            abstract: "Join a team with an invitation code, as yourself or as a new account of yours.",
            discussion: """
                Without --new-account, the account you are logged in as (coffer login) joins. With \
                --new-account NAME, the server makes the account NAME for you and its first API token, \
                which is saved as your login (credentials.json, mode 0600) and never printed; use \
                /dashboard/welcome to choose a dashboard password with it. Prefer --code-file: a CODE \
                argument is visible to other users of this machine while the command runs.
                """
        )

        @Argument(help: ArgumentHelp("The invitation code.", valueName: "CODE"))
        var code: String?

        @Option(help: ArgumentHelp("A file that holds the invitation code ('-' for standard input).", valueName: "FILE"))
        var codeFile: String?

        @Option(help: ArgumentHelp("Make your own new account with this name instead of using your login.", valueName: "NAME"))
        var newAccount: String?

        @Option(help: ArgumentHelp("The server, with --new-account (default: COFFER_SERVER or your login's).", valueName: "URL"))
        var server: String?

        func validate() throws {
            guard (code == nil) != (codeFile == nil) else { throw ValidationError("give exactly one of CODE or --code-file FILE") }
            if server != nil && newAccount == nil { throw ValidationError("--server goes with --new-account (otherwise your login's server is used)") }
        }

        func run() async throws {
            let secret = try readCode()
            guard let newAccount else {
                let client = try APIClient.configured()
                let joined = try await client.post(API.Joined.self, ["v1", "invitations", "accept"], json: API.InvitationCode(code: secret))
                return Printable.say("Joined team \(joined.team) as \(joined.role).")
            }
            let client: APIClient
            if let server {
                client = APIClient(server: try ServerAddress.parse(server), token: nil)
            } else {
                client = try APIClient.anonymous()
            }
            let redeemed = try await client.post(API.Redeemed.self, ["v1", "invitations", "redeem"],
                                                 json: API.Redemption(code: secret, name: newAccount))
            let path = try Credentials(server: client.server.absoluteString, token: redeemed.token).save()
            Printable.say("""
                Created your account \(redeemed.name); it joined team \(redeemed.team) as \(redeemed.role).
                Its API token is saved in \(path) (mode 0600): you are logged in.
                """)
        }

        private func readCode() throws -> String {
            if let code { return try InvitationCommand.clean(code, from: "the CODE argument") }
            guard let codeFile else { throw ValidationError("give exactly one of CODE or --code-file FILE") }
            // At most 4 KiB + 1 is read, from a file or standard input alike.
            // An invitation code is a secret until redeemed: the file must be the user's own and
            // private (SecretFile), as a token file.
            let data: [UInt8]
            do {
                data = try SecretFile.read(codeFile, atMost: 4097, what: "invitation code file", standardInput: true)
            } catch let failure as CLIFailure {
                throw failure
            } catch {
                throw AdminFailure(.noInput, "cannot read \(codeFile)")
            }
            guard data.count <= 4096 else { throw AdminFailure(.usage, "\(codeFile) is over 4 KiB; is it the right file?") }
            return try InvitationCommand.clean(String(decoding: data, as: UTF8.self), from: codeFile)
        }
    }

    /// The code with surrounding whitespace removed; usage error when it cannot be one. Never quotes it.
    static func clean(_ text: String, from source: String) throws -> String {
        let code = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard code.hasPrefix("cfi_"), code.utf8.count <= 200, code.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw AdminFailure(.usage, "\(source) does not hold an invitation code (they start with cfi_)")
        }
        return code
    }

    /// Prints a new invitation's code once, with what to do with it.
    static func printCode(of invitation: API.CreatedInvitation) {
        let whom = invitation.note.isEmpty ? "the person" : invitation.note
        Printable.say("""
            Invitation to team \(invitation.team) as \(invitation.role)\(invitation.note.isEmpty ? "" : " for \(invitation.note)") (ID \(invitation.id), expires \(invitation.expiresAt)):
            \(invitation.code)
            Give this code to \(whom) privately now: it is shown only once and works once. They run \
            coffer invitation accept --code-file FILE (add --new-account NAME --server URL without an \
            account), or open /dashboard/join.
            """)
    }
}
