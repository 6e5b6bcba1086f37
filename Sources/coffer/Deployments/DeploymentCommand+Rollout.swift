import ArgumentParser
import Foundation

extension DeploymentCommand {
    /// `coffer deployment advance DEPLOYMENT --collection ID`.
    struct Advance: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "advance",
            abstract: "Move a staged rollout to its next stage now, whatever its gate says.",
            discussion: "The collection's sequence number grows: devices of the new stage move at their next check."
        )

        @Argument(help: ArgumentHelp("The deployment's ID or name.", valueName: "DEPLOYMENT"))
        var deployment: String

        @OptionGroup var collection: CollectionOptions

        @Flag(help: "Print the deployment as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let location = try await collection.locate(client)
            let found = try await location.deployment(deployment, client)
            let advanced = try await client.post(API.Deployment.self, location.segments + ["deployments", found.id, "advance"])
            if json { return print(JSONOutput.render(advanced)) }
            let state = advanced.rollout.map { DeploymentText.rolloutLine($0) } ?? advanced.status
            Printable.say("Deployment \(advanced.name) of \(location.identifier): \(state).")
        }
    }

    /// `coffer deployment halt DEPLOYMENT --collection ID [--reason TEXT]`.
    struct Halt: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "halt",
            abstract: "Halt a staged rollout: every device gets the previous deployment again.",
            discussion: "The collection's sequence number grows, so devices move back at their next check."
        )

        @Argument(help: ArgumentHelp("The deployment's ID or name.", valueName: "DEPLOYMENT"))
        var deployment: String

        @OptionGroup var collection: CollectionOptions

        @Option(help: ArgumentHelp("Why, for the audit log and the status (at most 200 bytes).", valueName: "TEXT"))
        var reason: String?

        @Flag(help: "Print the deployment as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let location = try await collection.locate(client)
            let found = try await location.deployment(deployment, client)
            let halted = try await client.post(API.Deployment.self, location.segments + ["deployments", found.id, "halt"],
                                               json: API.HaltInput(reason: reason))
            if json { return print(JSONOutput.render(halted)) }
            let sequence = try await location.collection(client, fresh: true).sequence
            Printable.say("Halted the rollout of \(halted.name) of \(location.identifier): devices get the previous deployment from sequence \(sequence).")
        }
    }

    /// `coffer deployment status DEPLOYMENT --collection ID`.
    struct Status: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show a deployment's rollout stage and what its devices reported.",
            discussion: "Devices, not reports, are counted: a device that reports twice counts once (docs/ROLLOUTS.md)."
        )

        @Argument(help: ArgumentHelp("The deployment's ID or name.", valueName: "DEPLOYMENT"))
        var deployment: String

        @OptionGroup var collection: CollectionOptions

        @Flag(help: "Print the status as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let location = try await collection.locate(client)
            let found = try await location.deployment(deployment, client)
            let status = try await client.get(API.DeploymentStatus.self, location.segments + ["deployments", found.id, "status"])
            if json { return print(JSONOutput.render(status)) }
            Printable.say(Self.describe(status, collection: location.identifier))
        }

        static func describe(_ status: API.DeploymentStatus, collection: String) -> String {
            let state = status.rollout.map { DeploymentText.rolloutLine($0) } ?? status.state
            var lines = ["Deployment \(status.name) of \(collection): \(state)"]
            if let rollout = status.rollout {
                let stages = rollout.stages.map { "\($0) %" }.joined(separator: " → ")
                let hours = DeploymentText.percent(rollout.stageHours), halt = DeploymentText.percent(rollout.haltAt)
                lines.append("Stages:    \(stages); each at least \(hours) h; halt at \(halt) % of at least \(rollout.minReports) devices")
            }
            let outcomes = ["downloaded", "opened", "loaded", "failed"].map { "\(status.outcomes[$0] ?? 0) \($0)" }.joined(separator: ", ")
            lines.append("Devices:   \(status.devices) reported (\(outcomes))")
            if !status.models.isEmpty {
                var table = TextTable("MODEL", "DEVICES", "FAILED", "FAILURE RATE")
                for model in status.models {
                    table.add(model.model, String(model.devices), String(model.failed), DeploymentText.percent(model.failureRate) + " %")
                }
                lines += ["", table.render()]
            }
            if !status.topReasons.isEmpty {
                lines += ["", "Top failure reasons:"] + status.topReasons.map { "  \($0.count) × \(Printable.text($0.reason))" }
            }
            return lines.joined(separator: "\n")
        }
    }
}
