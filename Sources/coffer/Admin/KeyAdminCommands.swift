import ArgumentParser
import CofferFormat
import Foundation

/// `coffer key create/list/revoke`: team-bound model keys held by the server.
extension KeyCommand {
    /// `coffer key create --team T --name N [--output FILE] [--force]`: the server makes the key
    /// and returns it once; the `.modelkey` file it sends is saved exactly as sent.
    struct Create: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create a model key on the server and save its only copy as a .modelkey file (mode 0600)."
        )

        @Option(help: "The team.")
        var team: String

        @Option(help: "A name for the key.")
        var name: String

        @Option(name: .shortAndLong, help: ArgumentHelp("Where to write (default: NAME.modelkey).", valueName: "FILE"))
        var output: String?

        @Flag(help: "Replace FILE if it exists.")
        var force = false

        @Flag(help: "Print the key's ID, name, team and file as JSON (never the key).")
        var json = false

        func validate() throws {
            guard !name.isEmpty, !name.contains("/"), name.utf8.count <= 200 else {
                throw ValidationError("--name must be 1 to 200 bytes with no '/'")
            }
        }

        func run() async throws {
            let client = try APIClient.configured()
            let destination = output ?? name + ".modelkey"
            // Claim the output before the server makes a key that could then not be saved.
            let out = try AtomicOutput(finalPath: destination, replacing: force)
            let file = try out.createFile(mode: 0o600)
            let answer: HTTPTransport.Answer
            do {
                answer = try await client.send(client.request("POST", ["v1", "teams", team, "keys"], json: API.Name(name: name)))
            } catch {
                out.discard()
                throw error
            }
            try answer.body.withUnsafeBytes { try file.write($0, at: 0) }
            try file.synchronize()
            try out.commit()
            guard let key = try? ModelKey(fileRepresentation: answer.body) else {
                throw AdminFailure(.protocolError, "the server's answer, saved in \(destination), is not a .modelkey file")
            }
            if json {
                print(JSONOutput.render(["id": key.id, "name": key.name, "team": team, "file": destination]))
            } else {
                Printable.say("Created key \(key.name) in team \(team) (key ID \(key.id)); wrote \(destination). "
                              + "Keep it secret: anyone with it can open your models.")
            }
        }
    }

    /// `coffer key list --team T`: the team's keys, without material.
    struct List: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List a team's model keys (never the keys themselves).")

        @Option(help: "The team.")
        var team: String

        @Flag(help: "Print the keys as a JSON array.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let keys = try await client.get([API.ModelKey].self, "v1", "teams", team, "keys")
            if json { return print(JSONOutput.render(keys)) }
            var table = TextTable("ID", "NAME", "CREATED", "REVOKED")
            for key in keys { table.add(key.id, key.name, key.createdAt, key.revokedAt) }
            print(table.render())
        }
    }

    /// `coffer key revoke KEY_ID`: devices get the key no more.
    struct Revoke: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "Revoke a server-held model key: devices can no longer obtain it."
        )

        @Argument(help: ArgumentHelp("The key's ID (coffer key list).", valueName: "KEY_ID"))
        var id: String

        func run() async throws {
            let client = try APIClient.configured()
            try await client.delete("v1", "keys", id)
            Printable.say("Revoked key \(id).")
        }
    }
}
