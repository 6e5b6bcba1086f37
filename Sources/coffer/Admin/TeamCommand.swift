import ArgumentParser

/// `coffer team`: teams on the server.
struct TeamCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "team",
        abstract: "Create and list teams.",
        subcommands: [Create.self, List.self]
    )

    /// `coffer team create NAME`: a new team, owned by the caller.
    struct Create: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a team; you become its owner.")

        @Argument(help: "The team's name.")
        var name: String

        @Flag(help: "Print the team as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let team = try await client.post(API.Team.self, ["v1", "teams"], json: API.Name(name: name))
            if json {
                print(JSONOutput.render(team))
            } else {
                Printable.say("Created team \(team.name) (ID \(team.id)); you are its \(team.role).")
            }
        }
    }

    /// `coffer team list`: the caller's teams and roles.
    struct List: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List your teams and your role in each.")

        @Flag(help: "Print the teams as a JSON array.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let teams = try await client.get([API.Team].self, "v1", "teams")
            if json { return print(JSONOutput.render(teams)) }
            var table = TextTable("NAME", "ROLE", "ID")
            for team in teams { table.add(team.name, team.role, team.id) }
            print(table.render())
        }
    }
}
