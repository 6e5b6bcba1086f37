import ArgumentParser

/// `coffer deployment`: what a collection's devices get, and when.
struct DeploymentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deployment",
        abstract: "Deploy sealed models to a collection's devices: create, activate, roll back.",
        discussion: """
            A deployment gives each model name of a collection a sealed model, by default and per \
            targeting rule. It is created as a draft; activating it makes it what devices get (the \
            active one before it is archived, and the collection's sequence number grows). DEPLOYMENT \
            is a deployment's ID or its name, which is unique in its collection. --team may be left \
            out when only one of your teams has a collection with that identifier.
            """,
        subcommands: [Create.self, List.self, Show.self, Activate.self, Advance.self, Halt.self, Status.self, Clone.self, Archive.self,
                      Rollback.self, History.self]
    )

    /// `coffer deployment list --collection ID`.
    struct List: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List a collection's deployments, oldest first.")

        @OptionGroup var collection: CollectionOptions

        @Flag(help: "Print the deployments as a JSON array.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let location = try await collection.locate(client)
            let deployments = try await client.get([API.Deployment].self, location.segments + ["deployments"])
            if json { return print(JSONOutput.render(deployments)) }
            var table = TextTable("NAME", "STATUS", "ID", "CREATED", "ACTIVATED", "READY")
            for deployment in deployments {
                let problems = deployment.problems.count
                table.add(deployment.name, deployment.status, deployment.id.lowercased(), deployment.createdAt, deployment.activatedAt,
                          problems == 0 ? "yes" : "no (\(problems) problem\(problems == 1 ? "" : "s"))")
            }
            print(table.render())
        }
    }

    /// `coffer deployment show DEPLOYMENT --collection ID`.
    struct Show: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show a deployment: its models, rules, status and what keeps it from being activated."
        )

        @Argument(help: ArgumentHelp("The deployment's ID or name.", valueName: "DEPLOYMENT"))
        var deployment: String

        @OptionGroup var collection: CollectionOptions

        @Flag(help: "Print the deployment as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let found = try await collection.locate(client).deployment(deployment, client)
            if json { return print(JSONOutput.render(found)) }
            Printable.say(DeploymentText.describe(found))
        }
    }

    /// `coffer deployment activate DEPLOYMENT --collection ID`.
    struct Activate: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "activate",
            abstract: "Make a deployment the one devices get, at once or stage by stage.",
            discussion: """
                Refused, with the reasons, while the deployment has problems (coffer deployment show \
                lists them). With --stages, the devices whose rollout bucket is below the stage's \
                percentage get it and the others keep the active deployment; each stage lasts at \
                least --stage-hours, then the next starts if fewer than --halt-at percent of at least \
                --min-reports reporting devices failed. At --halt-at or above, the server halts the \
                rollout and every device goes back (docs/ROLLOUTS.md).

                Example:
                  coffer deployment activate summer --collection FlowerModels --stages 1,10,50,100 \\
                    --stage-hours 24 --halt-at 5 --min-reports 20
                """
        )

        @Argument(help: ArgumentHelp("The deployment's ID or name.", valueName: "DEPLOYMENT"))
        var deployment: String

        @OptionGroup var collection: CollectionOptions

        @Option(help: ArgumentHelp("Roll out in stages: percentages of devices, increasing, ending at 100.", valueName: "P,P,…"))
        var stages: String?

        @Option(help: ArgumentHelp("The least hours each stage runs (default 24; fractions allowed).", valueName: "H"))
        var stageHours: Double?

        @Option(help: ArgumentHelp("The failure rate, in percent of reporting devices, that halts the rollout (default 5).", valueName: "PERCENT"))
        var haltAt: Double?

        @Option(help: ArgumentHelp("The reporting devices a stage needs before it advances or halts (default 20).", valueName: "N"))
        var minReports: Int?

        @Flag(help: "Print the activated deployment as JSON.")
        var json = false

        func validate() throws {
            if stages == nil, stageHours != nil || haltAt != nil || minReports != nil {
                throw ValidationError("--stage-hours, --halt-at and --min-reports go with --stages")
            }
            _ = try stagePercentages()
        }

        /// --stages as numbers; nil without it.
        func stagePercentages() throws -> [Int]? {
            guard let stages else { return nil }
            let parts = stages.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let numbers = parts.compactMap { Int($0) }
            guard numbers.count == parts.count else { throw ValidationError("--stages takes percentages separated by commas, e.g. 1,10,50,100") }
            return numbers
        }

        func run() async throws {
            let client = try APIClient.configured()
            let location = try await collection.locate(client)
            let found = try await location.deployment(deployment, client)
            guard let stages = try stagePercentages() else {
                let activated = try await DeploymentCommand.activate(found, in: location, client)
                if json { return print(JSONOutput.render(activated)) }
                return try await DeploymentCommand.reportActivation(of: activated, in: location, client)
            }
            let options = API.ActivationOptions(stages: stages, stageHours: stageHours, haltAt: haltAt, minReports: minReports)
            let staged = try await client.post(API.Deployment.self, location.segments + ["deployments", found.id, "activate"], json: options)
            if json { return print(JSONOutput.render(staged)) }
            guard let rollout = staged.rollout, rollout.state == "staged" else {
                return try await DeploymentCommand.reportActivation(of: staged, in: location, client)
            }
            let sequence = try await location.collection(client, fresh: true).sequence
            Printable.say("Staged deployment \(staged.name) of \(location.identifier) from sequence \(sequence): "
                          + DeploymentText.rolloutLine(rollout) + ".")
        }
    }

    /// `coffer deployment archive DEPLOYMENT --collection ID`.
    struct Archive: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "archive",
            abstract: "Archive a draft or a replaced deployment (the active one cannot be).",
            discussion: "An archived deployment can still be activated again, or cloned."
        )

        @Argument(help: ArgumentHelp("The deployment's ID or name.", valueName: "DEPLOYMENT"))
        var deployment: String

        @OptionGroup var collection: CollectionOptions

        @Flag(help: "Print the archived deployment as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let location = try await collection.locate(client)
            let found = try await location.deployment(deployment, client)
            let archived = try await client.post(API.Deployment.self, location.segments + ["deployments", found.id, "archive"])
            if json { return print(JSONOutput.render(archived)) }
            Printable.say("Archived deployment \(archived.name) of \(location.identifier).")
        }
    }

    /// `coffer deployment rollback --collection ID`.
    struct Rollback: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "rollback",
            abstract: "Re-activate the deployment every device had before the current one (a halted rollout's is skipped).",
            discussion: "The collection's sequence number still grows, so devices take the older models as the newest answer."
        )

        @OptionGroup var collection: CollectionOptions

        @Flag(help: "Print the re-activated deployment as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let location = try await collection.locate(client)
            let restored = try await client.post(API.Deployment.self, location.segments + ["rollback"])
            if json { return print(JSONOutput.render(restored)) }
            let sequence = try await location.collection(client, fresh: true).sequence
            Printable.say("Rolled \(location.identifier) back to deployment \(restored.name) (ID \(restored.id.lowercased())); "
                          + "devices get it from sequence \(sequence).")
        }
    }

    /// `coffer deployment history --collection ID`.
    struct History: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "history", abstract: "List a collection's activations and rollbacks, newest first.")

        @OptionGroup var collection: CollectionOptions

        @Flag(help: "Print the activations as a JSON array.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let location = try await collection.locate(client)
            let activations = try await client.get([API.Activation].self, location.segments + ["activations"])
            if json { return print(JSONOutput.render(activations)) }
            var table = TextTable("SEQUENCE", "KIND", "DEPLOYMENT", "ID", "BY", "AT")
            for activation in activations {
                table.add(String(activation.sequence), activation.kind, activation.deploymentName, activation.deploymentID.lowercased(),
                          activation.actor, activation.at)
            }
            print(table.render())
        }
    }

    /// Activates `deployment`. The server refuses one with problems (409 not_ready), saying them.
    static func activate(_ deployment: API.Deployment, in location: CollectionLocation, _ client: APIClient) async throws -> API.Deployment {
        try await client.post(API.Deployment.self, location.segments + ["deployments", deployment.id, "activate"])
    }

    /// Says that `deployment` is now what devices get, and from which sequence number.
    static func reportActivation(of deployment: API.Deployment, in location: CollectionLocation, _ client: APIClient) async throws {
        let sequence = try await location.collection(client, fresh: true).sequence
        Printable.say("Activated deployment \(deployment.name) of \(location.identifier): devices get it from sequence \(sequence).")
    }
}
