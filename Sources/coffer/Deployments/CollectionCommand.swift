import ArgumentParser
import Foundation

/// `coffer collection`: a team's model collections, the named sets of models an app asks for.
struct CollectionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collection",
        abstract: "Create and list model collections and their model names.",
        discussion: """
            A collection is what an app asks for by identifier (such as FlowerModels): a set of model \
            names, each given a sealed model by the collection's active deployment (coffer deployment). \
            --team may be left out when only one of your teams has a collection with that identifier.
            """,
        subcommands: [Create.self, List.self, Show.self, AddModel.self, RemoveModel.self]
    )

    /// `coffer collection create ID --team T --models A,B [--description D]`.
    struct Create: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a collection with its model names.")

        @Argument(help: ArgumentHelp("The identifier apps use: ASCII letters, digits, '.', '_' or '-'.", valueName: "ID"))
        var identifier: String

        @Option(help: "The team.")
        var team: String

        @Option(help: ArgumentHelp("The model names, separated by commas.", valueName: "A,B,…"))
        var models: String

        @Option(help: "What the collection is for.")
        var description: String?

        @Flag(help: "Print the collection as JSON.")
        var json = false

        func validate() throws { _ = try names() }

        /// The model names: trimmed, none empty, no repeats.
        func names() throws -> [String] {
            let names = models.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard !names.contains(where: \.isEmpty) else { throw ValidationError("--models is a comma-separated list of model names, none empty") }
            guard Set(names).count == names.count else { throw ValidationError("--models names a model twice") }
            return names
        }

        func run() async throws {
            let client = try APIClient.configured()
            let collection = try await client.post(API.Collection.self, ["v1", "teams", team, "collections"],
                                                   json: API.NewCollection(identifier: identifier, description: description, models: try names()))
            if json { return print(JSONOutput.render(collection)) }
            Printable.say("Created collection \(collection.identifier) in team \(collection.team) "
                          + "with models \(collection.models.joined(separator: ", ")).")
        }
    }

    /// `coffer collection list [--team T]`.
    struct List: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the collections of a team, or of all your teams.")

        @Option(help: "Only this team's collections.")
        var team: String?

        @Flag(help: "Print the collections as a JSON array.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let collections = if let team {
                try await client.get([API.Collection].self, "v1", "teams", team, "collections")
            } else {
                try await client.get([API.Collection].self, "v1", "collections")
            }
            if json { return print(JSONOutput.render(collections)) }
            var table = TextTable("TEAM", "COLLECTION", "MODELS", "SEQUENCE", "ACTIVE DEPLOYMENT")
            for collection in collections {
                table.add(collection.team, collection.identifier, collection.models.joined(separator: ","),
                          String(collection.sequence), collection.activeDeploymentID?.lowercased())
            }
            print(table.render())
        }
    }

    /// `coffer collection show ID [--team T]`.
    struct Show: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show a collection, with its active deployment.")

        @Argument(help: ArgumentHelp("The collection's identifier.", valueName: "ID"))
        var identifier: String

        @OptionGroup var team: TeamOption

        @Flag(help: "Print the collection as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let location = try await CollectionLocation.find(identifier, team: team.team, client: client)
            let collection = try await location.collection(client)
            if json { return print(JSONOutput.render(collection)) }
            var active = "none"
            if let id = collection.activeDeploymentID {
                let deployment = try await client.get(API.Deployment.self, location.segments + ["deployments", id])
                active = "\(deployment.name) (ID \(id.lowercased()))"
            }
            Printable.say("""
                Collection:  \(collection.identifier)
                Team:        \(collection.team)
                Description: \(collection.description.isEmpty ? "-" : collection.description)
                Models:      \(collection.models.joined(separator: ", "))
                Active:      \(active)
                Sequence:    \(collection.sequence)
                Created:     \(collection.createdAt ?? "-")
                """)
        }
    }

    /// What `add-model` and `remove-model` take: `ID NAME [--team T] [--json]`.
    struct ModelNameArguments: ParsableArguments {
        @Argument(help: ArgumentHelp("The collection's identifier.", valueName: "ID"))
        var identifier: String

        @Argument(help: ArgumentHelp("The model name.", valueName: "NAME"))
        var name: String

        @OptionGroup var team: TeamOption

        @Flag(help: "Print the collection as JSON.")
        var json = false

        /// Sends `method` to the collection's model names and reports the collection it answers.
        func change(_ method: String, done: String) async throws {
            let client = try APIClient.configured()
            let location = try await CollectionLocation.find(identifier, team: team.team, client: client)
            let request = method == "POST"
                ? client.request("POST", location.segments + ["models"], json: API.Name(name: name))
                : client.request("DELETE", location.segments + ["models", name])
            let collection = try client.decode(API.Collection.self, from: try await client.send(request))
            if json { return print(JSONOutput.render(collection)) }
            Printable.say("\(done) \(name) \(method == "POST" ? "to" : "from") \(collection.identifier); its models: \(collection.models.joined(separator: ", ")).")
        }
    }

    /// `coffer collection add-model ID NAME [--team T]`.
    struct AddModel: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-model",
            abstract: "Add a model name to a collection (deployments activated after this must give it a model)."
        )

        @OptionGroup var arguments: ModelNameArguments

        func run() async throws { try await arguments.change("POST", done: "Added") }
    }

    /// `coffer collection remove-model ID NAME [--team T]`.
    struct RemoveModel: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-model",
            abstract: "Remove a model name from a collection (refused while the active deployment uses it)."
        )

        @OptionGroup var arguments: ModelNameArguments

        func run() async throws { try await arguments.change("DELETE", done: "Removed") }
    }
}
