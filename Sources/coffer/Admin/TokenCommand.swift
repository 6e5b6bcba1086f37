import ArgumentParser

/// `coffer token`: the caller's personal API tokens.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Create, list and revoke your API tokens.",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    /// `coffer token create --name N`: a new token, shown once.
    struct Create: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Create an API token; it is shown only once.")

        @Option(help: "A name that says where the token is used.")
        var name: String

        @Flag(help: "Print the token as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let created = try await client.post(API.CreatedToken.self, ["v1", "tokens"], json: API.Name(name: name))
            if json { return print(JSONOutput.render(created)) }
            Printable.say("""
                Created token \(created.name) (ID \(created.id)):
                \(created.token)
                Store it now: it is shown only once.
                """)
        }
    }

    /// `coffer token list`: names, prefixes and times; never the tokens.
    struct List: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List your API tokens (never their values).")

        @Flag(help: "Print the tokens as a JSON array.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let tokens = try await client.get([API.Token].self, "v1", "tokens")
            if json { return print(JSONOutput.render(tokens)) }
            var table = TextTable("ID", "NAME", "PREFIX", "CREATED", "LAST USED", "REVOKED")
            for token in tokens {
                table.add(token.id, token.name, token.prefix, token.createdAt, token.lastUsedAt, token.revokedAt)
            }
            print(table.render())
        }
    }

    /// `coffer token revoke TOKEN_ID`.
    struct Revoke: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke one of your API tokens.")

        @Argument(help: ArgumentHelp("The token's ID (coffer token list).", valueName: "TOKEN_ID"))
        var id: String

        func run() async throws {
            let client = try APIClient.configured()
            try await client.delete("v1", "tokens", id)
            Printable.say("Revoked token \(id).")
        }
    }
}
