import ArgumentParser

extension DeploymentCommand {
    /// `coffer deployment create --collection ID --name N --model A=PATH … [--rule …] [--rollout P] [--activate]`.
    struct Create: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Upload sealed models and create a deployment of them (a draft, or active with --activate).",
            discussion: """
                Each file is uploaded once, and not at all if the server already has its bytes; a \
                progress bar shows on a terminal for large files. Models must be sealed with a model \
                key of the collection's team (coffer key create, then coffer encrypt --key).

                Examples:
                  coffer deployment create --collection FlowerModels --name spring \\
                    --model FlowerClassifier=classifier.coffer \\
                    --model FlowerStylizer=stylizer.coffer --activate
                  coffer deployment create --collection FlowerModels --name tablets \\
                    --model FlowerClassifier=classifier.coffer \\
                    --model FlowerStylizer=stylizer.coffer \\
                    --rule 'deviceClass=tablet : FlowerClassifier=large.coffer' --rollout 10
                """
        )

        @OptionGroup var collection: CollectionOptions

        @Option(help: "The deployment's name, unique in the collection.")
        var name: String

        @OptionGroup var content: DeploymentContent

        @Flag(help: "Print the deployment as JSON (and nothing about the uploads).")
        var json = false

        func validate() throws {
            guard !content.models.isEmpty else { throw ValidationError("give the deployment's models with --model NAME=PATH.coffer") }
        }

        func run() async throws {
            let client = try APIClient.configured()
            let location = try await collection.locate(client)
            let plan = try content.plan()
            try DeploymentCommand.check(plan, against: try await location.collection(client))
            let (models, rules) = try await plan.upload(for: location.team, client, report: !json,
                                                        key: content.key.isGiven ? try content.key.material() : nil)
            let draft = try await client.post(API.Deployment.self, location.segments + ["deployments"],
                                              json: API.DeploymentInput(name: name, models: models, rules: rules))
            try await DeploymentCommand.finish(draft, verb: "Created", activate: content.activate, json: json, in: location, client)
        }
    }

    /// `coffer deployment clone DEPLOYMENT --collection ID --name N [--model …] [--rule …] [--rollout P] [--activate]`.
    struct Clone: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "clone",
            abstract: "Copy a deployment into a new draft, with some models or the rules changed.",
            discussion: """
                --model replaces the default model of that name and keeps the others; --rule options \
                replace all of the source's rules (without any, the clone keeps them). Files are \
                uploaded as by create. The clone keeps its source's rollout assignment, so raising a \
                rollout keeps the devices that already had it.

                Example: give tablets a larger classifier, starting with a tenth of them:
                  coffer deployment clone spring --collection FlowerModels \\
                    --name spring-tablets --rollout 10 --activate \\
                    --rule 'deviceClass=tablet : FlowerClassifier=large.coffer'
                """
        )

        @Argument(help: ArgumentHelp("The deployment to copy: its ID or name.", valueName: "DEPLOYMENT"))
        var source: String

        @OptionGroup var collection: CollectionOptions

        @Option(help: "The new deployment's name, unique in the collection.")
        var name: String

        @OptionGroup var content: DeploymentContent

        @Flag(help: "Print the new deployment as JSON (and nothing about the uploads).")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let location = try await collection.locate(client)
            let plan = try content.plan()
            let original = try await location.deployment(source, client)
            try DeploymentCommand.check(plan, against: try await location.collection(client))
            let (models, rules) = try await plan.upload(for: location.team, client, report: !json,
                                                        key: content.key.isGiven ? try content.key.material() : nil)
            let input = API.DeploymentInput(name: name, models: models.isEmpty ? nil : models, rules: rules)
            let clone = try await client.post(API.Deployment.self, location.segments + ["deployments", original.id, "clone"], json: input)
            try await DeploymentCommand.finish(clone, verb: "Cloned \(original.name) into", activate: content.activate, json: json, in: location, client)
        }
    }

    /// Refuses, before anything is uploaded, model names the collection does not have.
    static func check(_ plan: DeploymentContent.Plan, against collection: API.Collection) throws {
        for name in plan.names where !collection.models.contains(name) {
            throw AdminFailure(.usage, "\(collection.identifier) has no model named \(name) (it has \(collection.models.joined(separator: ", ")))")
        }
    }

    /// Activates a new draft if asked, then prints it. A refused activation leaves the draft and says why.
    static func finish(_ draft: API.Deployment, verb: String, activate: Bool, json: Bool,
                       in location: CollectionLocation, _ client: APIClient) async throws {
        var deployment = draft
        if !json { Printable.say("\(verb) draft deployment \(draft.name) (ID \(draft.id.lowercased())).") }
        if activate {
            do {
                deployment = try await DeploymentCommand.activate(draft, in: location, client)
            } catch let failure as AdminFailure {
                throw AdminFailure(failure.status, "the draft \(draft.name) was saved but not activated: \(failure.message)")
            }
        }
        if json { return print(JSONOutput.render(deployment)) }
        if activate { try await reportActivation(of: deployment, in: location, client) }
        Printable.say("\n" + DeploymentText.describe(deployment))
    }
}
